"""cartsim from Python: thousands of environments stepped by one fused,
JIT-compiled kernel, as a Gymnasium vector environment.

    import cartsim, gymnasium as gym
    envs = cartsim.make_vec("CartPole-v1", num_envs=4096, seed=0)
    envs = gym.make_vec("cartsim/CartPole-v1", num_envs=4096)      # registered on import
    obs, info = envs.reset(seed=42)
    obs, rew, terminated, truncated, info = envs.step(envs.action_space.sample())
"""
import gymnasium

from ._native import CartsimError, lib as _lib, text as _text
from .batch import Batch
from .training import Policy, TrainResult, evaluate, load_policy, policy_batch, save_policy, train, train_settings
from .vector_env import ENV_IDS, GYMNASIUM_IDS, KeywordError as _KeywordError
from .vector_env import Env, VectorEnv

__version__ = _text(_lib.cs_version())


def make_vec(env="CartPole-v1", num_envs=1, **kwargs):
    """A VectorEnv (see its docstring for the keywords): the settings, and the
    environment's params by name, as gym.make takes them
    (cartsim.make_vec("FrozenLake-v1", 16, is_slippery=False))."""
    try:
        return VectorEnv(env, num_envs, **kwargs)
    except _KeywordError as e:
        raise e.called_by("cartsim.make_vec") from None


def make(env="CartPole-v1", **kwargs):
    """One environment as a gymnasium.Env (the same keywords as make_vec)."""
    try:
        return Env(env, **kwargs)
    except _KeywordError as e:
        raise e.called_by("cartsim.make") from None


def _register():
    """cartsim/<id> for every built-in environment (gym.make, gym.make_vec)."""
    for gym_id in ENV_IDS:
        name = "cartsim/" + gym_id
        if name not in gymnasium.registry:
            gymnasium.register(name, entry_point="cartsim.vector_env:Env",
                               vector_entry_point="cartsim.vector_env:VectorEnv", kwargs={"env": gym_id})


_register()

__all__ = ["Batch", "CartsimError", "ENV_IDS", "Env", "GYMNASIUM_IDS", "Policy", "TrainResult", "VectorEnv", "evaluate",
           "load_policy", "make", "make_vec", "policy_batch", "save_policy", "train", "train_settings"]

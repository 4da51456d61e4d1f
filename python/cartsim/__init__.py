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
from .batch import check_keywords as _check_keywords
from .vector_env import GYMNASIUM_IDS, SINGLE_KEYWORDS as _SINGLE_KEYWORDS, VECTOR_KEYWORDS as _VECTOR_KEYWORDS
from .vector_env import Env, VectorEnv

__version__ = _text(_lib.cs_version())


def make_vec(env="CartPole-v1", num_envs=1, **kwargs):
    """A VectorEnv (see its docstring for the keywords)."""
    _check_keywords("cartsim.make_vec", kwargs, _VECTOR_KEYWORDS)
    return VectorEnv(env, num_envs, **kwargs)


def make(env="CartPole-v1", **kwargs):
    """One environment as a gymnasium.Env."""
    _check_keywords("cartsim.make", kwargs, _SINGLE_KEYWORDS)
    return Env(env, **kwargs)


def _register():
    for gym_id in GYMNASIUM_IDS:
        name = "cartsim/" + gym_id
        if name not in gymnasium.registry:
            gymnasium.register(name, entry_point="cartsim.vector_env:Env",
                               vector_entry_point="cartsim.vector_env:VectorEnv", kwargs={"env": gym_id})


_register()

__all__ = ["Batch", "CartsimError", "Env", "GYMNASIUM_IDS", "Policy", "TrainResult", "VectorEnv", "evaluate",
           "load_policy", "make", "make_vec", "policy_batch", "save_policy", "train", "train_settings"]

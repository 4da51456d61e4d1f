"""A Stable-Baselines3 VecEnv over cartsim (pip install stable-baselines3).

    from cartsim.sb3 import CartsimVecEnv
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor
    env = VecMonitor(CartsimVecEnv("CartPole-v1", num_envs=8))
    model = PPO("MlpPolicy", env, verbose=1).learn(100_000)

Wrap it in SB3's VecMonitor, as above: it keeps the episode returns and lengths
that SB3's logger (ep_rew_mean) and evaluate_policy read (without it
evaluate_policy warns that the environment is not wrapped with a Monitor).

SB3's conventions differ from Gymnasium's vector API: auto-reset happens in
the same step (cartsim's SAME_STEP mode), `dones` is terminated or truncated,
the ending observation is in infos[i]["terminal_observation"], truncation in
infos[i]["TimeLimit.truncated"], rewards are float32. SB3 keeps the
observations it is given across steps, so this adapter hands out copies
(the Gymnasium VectorEnv does not).
"""
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .vector_env import VectorEnv


class CartsimVecEnv(VecEnv):
    def __init__(self, env="CartPole-v1", num_envs=8, **kwargs):
        self.envs = VectorEnv(env, num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **kwargs)
        super().__init__(num_envs, self.envs.single_observation_space, self.envs.single_action_space)
        self._actions = None
        self._next_seed = None

    def seed(self, seed=None):
        self._next_seed = seed
        return [seed] * self.num_envs

    def reset(self):
        obs, _ = self.envs.reset(seed=self._next_seed)
        self._next_seed = None
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return np.array(obs)

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        obs, rewards, terminated, truncated, info = self.envs.step(self._actions)
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return np.array(obs), rewards.astype(np.float32), dones.copy(), infos

    def close(self):
        self.envs.close()

    def get_images(self):
        return list(self.envs.render() or [])

    def get_attr(self, attr_name, indices=None):
        return [getattr(self.envs, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.envs, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        result = getattr(self.envs, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._get_indices(indices))

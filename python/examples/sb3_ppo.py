#!/usr/bin/env python3
"""Stable-Baselines3's PPO trained through cartsim's VecEnv adapter.

    pip install stable-baselines3
    python python/examples/sb3_ppo.py [TIMESTEPS]
"""
import sys

from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecMonitor

from cartsim.sb3 import CartsimVecEnv


def main(steps):
    # VecMonitor keeps the episode statistics SB3's logger and evaluate_policy read.
    env = VecMonitor(CartsimVecEnv("CartPole-v1", num_envs=8, threads=1, seed=0))
    model = PPO("MlpPolicy", env, n_steps=256, batch_size=256, seed=0, verbose=0).learn(steps)
    evaluation = VecMonitor(CartsimVecEnv("CartPole-v1", num_envs=10, threads=1, seed=1))
    mean, std = evaluate_policy(model, evaluation, n_eval_episodes=100)
    print("SB3 PPO through cartsim: %d steps, mean return %.1f +- %.1f over 100 episodes" % (steps, mean, std))
    return model, mean, std


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

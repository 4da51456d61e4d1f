#!/usr/bin/env python3
"""CleanRL-style PPO (single file, PyTorch) on a Gymnasium vector environment:
cartsim's, or Gymnasium's own for comparison.

    python python/examples/ppo.py --backend cartsim      # cartsim.make_vec("CartPole-v1", ...)
    python python/examples/ppo.py --backend gymnasium    # gym.make_vec(..., vectorization_mode="vector_entry_point")

After training, the greedy policy plays 100 evaluation episodes; the script
prints one JSON line: mean return, wall times. Follows CleanRL's ppo.py
(Huang et al.) with its CartPole hyperparameters and loss (the value loss
clipped too); adapted to Gymnasium's NEXT_STEP auto-reset (both environments
use it): the step after an episode ends only resets, so that transition is
masked out of the loss. An episode cut by the time limit (truncated, not
terminated) is not a terminal state: its last reward is bootstrapped with the
value of its last observation (which NEXT_STEP returns at that step), so the
value of a state does not depend on how long the episode has already lasted,
which the observation does not show.

Install: pip install "./python[ppo]" --extra-index-url https://download.pytorch.org/whl/cpu
(the CPU-only PyTorch wheels; or any torch already installed).
"""
import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", choices=["cartsim", "gymnasium"], default="cartsim")
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--num-envs", type=int, default=4)
    p.add_argument("--num-steps", type=int, default=128)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--eval-episodes", type=int, default=100)
    p.add_argument("--threads", type=int, default=1, help="torch and cartsim threads")
    p.add_argument("--eval-every", type=int, default=0,
                   help="also evaluate every K iterations (counted in the wall time), 0: only at the end")
    p.add_argument("--stop-at", type=float, default=None,
                   help="stop once such an evaluation's mean return reaches this (time to solve)")
    return p.parse_args()


def make_envs(backend, env_id, num_envs, seed):
    if backend == "cartsim":
        import cartsim
        return cartsim.make_vec(env_id, num_envs=num_envs, seed=seed, threads=1)
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")


def layer(i, o, std=np.sqrt(2), bias=0.0):
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, bias)
    return lin


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, std=1.0))
        self.actor = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(),
                                   layer(64, n_actions, std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def evaluate(agent, backend, env_id, episodes, seed):
    """Greedy actions; the first episode of each of `episodes` environments."""
    envs = make_envs(backend, env_id, episodes, seed + 10_000)
    obs, _ = envs.reset(seed=seed + 10_000)
    returns, running = np.zeros(episodes), np.zeros(episodes)
    finished = np.zeros(episodes, bool)
    while not finished.all():
        with torch.no_grad():
            actions = agent.actor(torch.as_tensor(np.array(obs))).argmax(1).numpy()
        obs, rew, term, trunc, _ = envs.step(actions)
        running += rew * ~finished
        ended = (term | trunc) & ~finished
        returns[ended] = running[ended]
        finished |= ended
    envs.close()
    return returns


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    iterations = args.total_timesteps // batch_size

    envs = make_envs(args.backend, args.env_id, args.num_envs, args.seed)
    obs_dim = envs.single_observation_space.shape[0]
    agent = Agent(obs_dim, envs.single_action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, obs_dim))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    start = time.time()
    env_seconds = 0.0
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(np.array(next_obs))   # a copy: the environment's view changes at the next step
    next_done = torch.zeros(args.num_envs)
    episode_returns, running = [], np.zeros(args.num_envs)
    curve, solved_at = [], None   # (seconds, env-steps, last training returns' mean, evaluation or None)
    for iteration in range(1, iterations + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / iterations) * args.learning_rate
        for step in range(args.num_steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            t0 = time.time()
            o, r, term, trunc, _ = envs.step(action.numpy())
            env_seconds += time.time() - t0
            rewards[step] = torch.as_tensor(np.array(r, dtype=np.float32))
            next_obs = torch.as_tensor(np.array(o))
            cut = np.flatnonzero(np.logical_and(trunc, np.logical_not(term)))
            if cut.size:   # the time limit: bootstrap from the last observation's value
                with torch.no_grad():
                    rewards[step, cut] += args.gamma * agent.get_value(next_obs[cut]).flatten()
            done = np.logical_or(term, trunc)
            next_done = torch.as_tensor(done, dtype=torch.float32)
            running += r
            for i in np.flatnonzero(done):
                episode_returns.append(running[i])
            running[done] = 0
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            last = 0
            for t in reversed(range(args.num_steps)):
                nonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * nonterminal - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            returns = advantages + values
        # NEXT_STEP: where the previous step ended an episode, this step only reset it.
        valid = (1.0 - dones).reshape(-1)
        b_obs, b_actions = obs.reshape(-1, obs_dim), actions.reshape(-1)
        b_logprobs, b_adv = logprobs.reshape(-1), advantages.reshape(-1)
        b_returns, b_values = returns.reshape(-1), values.reshape(-1)
        order = np.arange(batch_size)
        for _ in range(args.update_epochs):
            np.random.shuffle(order)
            for s in range(0, batch_size, minibatch_size):
                mb = order[s:s + minibatch_size]
                w = valid[mb]
                n = w.sum().clamp(min=1.0)
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                mean = (adv * w).sum() / n
                std = (((adv - mean) ** 2 * w).sum() / n).sqrt()
                adv = (adv - mean) / (std + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb] + (newvalue - b_values[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2)
                loss = ((pg - args.ent_coef * entropy + args.vf_coef * v_loss) * w).sum() / n
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        scored = None
        if args.eval_every and iteration % args.eval_every == 0:
            scored = float(evaluate(agent, args.backend, args.env_id, args.eval_episodes, args.seed).mean())
        recent = float(np.mean(episode_returns[-20:])) if episode_returns else None
        curve.append((round(time.time() - start, 3), iteration * batch_size, recent, scored))
        if scored is not None and args.stop_at is not None and scored >= args.stop_at:
            solved_at = (round(time.time() - start, 3), iteration * batch_size)
            break
    train_seconds = time.time() - start
    envs.close()
    eval_returns = evaluate(agent, args.backend, args.env_id, args.eval_episodes, args.seed)
    print(json.dumps({"backend": args.backend, "env": args.env_id, "total_timesteps": curve[-1][1] if curve else 0,
                      "solved_at_seconds": solved_at and solved_at[0], "solved_at_steps": solved_at and solved_at[1],
                      "curve": curve,
                      "train_seconds": round(train_seconds, 2), "env_step_seconds": round(env_seconds, 2),
                      "last_100_training_returns": float(np.mean(episode_returns[-100:])),
                      "eval_episodes": args.eval_episodes, "eval_mean_return": float(eval_returns.mean()),
                      "eval_min_return": float(eval_returns.min())}))


if __name__ == "__main__":
    main()

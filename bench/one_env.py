"""One environment stepped from Python, microseconds a step: cartsim.make
against Gymnasium's own gymnasium.make for the same id (bench/bench.py's
stage 8 runs this in build/py-venv, the package's test environment).

  one_env.py [--env CartPole-v1] [--steps N] [--rounds R]

Prints one JSON line: the median over the rounds of each (alternating),
random actions drawn before the timing, CPU time of this process."""
import argparse
import json
import statistics
import time

import gymnasium
import numpy as np

import cartsim


def per_step_us(env, actions):
    env.reset(seed=0)
    t = time.process_time()
    for a in actions:
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            env.reset()
    return (time.process_time() - t) / len(actions) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    ours, theirs = cartsim.make(a.env, threads=1), gymnasium.make(a.env)
    space = theirs.action_space
    space.seed(1)
    actions = [space.sample() for _ in range(a.steps)]
    if isinstance(space, gymnasium.spaces.Discrete):
        actions = [int(x) for x in actions]
    runs = {"cartsim": [], "gymnasium": []}
    for _ in range(a.rounds):
        runs["cartsim"].append(per_step_us(ours, actions))
        runs["gymnasium"].append(per_step_us(theirs, actions))
    print(json.dumps({"env": a.env, "steps": a.steps, "cartsim_us": statistics.median(runs["cartsim"]),
                      "gymnasium_us": statistics.median(runs["gymnasium"]), "runs": runs,
                      "numpy": np.__version__, "gymnasium": gymnasium.__version__}))


if __name__ == "__main__":
    main()

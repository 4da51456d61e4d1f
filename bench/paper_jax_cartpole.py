"""The seed paper's JAX CartPole ("Operator Fusion in XLA", Snider & Liang 2023),
for timing beside cartsim on the same device (bench/gpu.sh's section 5).

Three variants of one rollout, N environments x T steps, random actions drawn
in JAX, episodes restarted where they end (Gymnasium's CartPole-v1 physics):
  concat    the state packed as one [N, 4] array, rebuilt with jnp.stack each
            step, as the paper's code does (XLA must fuse through the concat);
  split     the same with the four variables carried apart (no concatenate);
  unroll10  `split` under lax.scan(..., unroll=10).
Each is jitted once; compile time (lower + compile) and run time (median of
REPEATS runs, after one warm-up, block_until_ready) are reported apart, as one
JSON line per variant on stdout.

    python bench/paper_jax_cartpole.py [--envs 2048] [--steps 10000] [--repeats 3]
"""

import argparse
import json
import statistics
import time
from typing import Callable

import jax
import jax.numpy as jnp

GRAVITY, MASS_CART, MASS_POLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = MASS_CART + MASS_POLE
POLE_MASS_LENGTH = MASS_POLE * LENGTH
THETA_LIMIT = 12 * 2 * 3.141592653589793 / 360
X_LIMIT = 2.4

State = tuple[jax.Array, jax.Array, jax.Array, jax.Array]


def physics(s: State, action: jax.Array) -> tuple[State, jax.Array]:
    """One Euler step of Gymnasium's CartPole-v1 and whether it ended."""
    x, x_dot, theta, theta_dot = s
    force = jnp.where(action, FORCE_MAG, -FORCE_MAG)
    cos, sin = jnp.cos(theta), jnp.sin(theta)
    temp = (force + POLE_MASS_LENGTH * theta_dot**2 * sin) / TOTAL_MASS
    theta_acc = (GRAVITY * sin - cos * temp) / (LENGTH * (4.0 / 3.0 - MASS_POLE * cos**2 / TOTAL_MASS))
    x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS
    nxt = (x + TAU * x_dot, x_dot + TAU * x_acc, theta + TAU * theta_dot, theta_dot + TAU * theta_acc)
    done = (jnp.abs(nxt[0]) > X_LIMIT) | (jnp.abs(nxt[2]) > THETA_LIMIT)
    return nxt, done


def fresh(key: jax.Array, n: int) -> jax.Array:
    return jax.random.uniform(key, (4, n), minval=-0.05, maxval=0.05)


def rollout_fn(variant: str, n: int, steps: int) -> Callable[[jax.Array], jax.Array]:
    unroll = 10 if variant == "unroll10" else 1

    def step_split(carry: tuple[State, jax.Array], t: jax.Array) -> tuple[tuple[State, jax.Array], None]:
        s, key = carry
        k_act, k_reset = jax.random.split(jax.random.fold_in(key, t))
        nxt, done = physics(s, jax.random.bernoulli(k_act, 0.5, (n,)))
        reset = fresh(k_reset, n)
        s = tuple(jnp.where(done, reset[i], nxt[i]) for i in range(4))
        return (s, key), None

    def step_concat(carry: tuple[jax.Array, jax.Array], t: jax.Array) -> tuple[tuple[jax.Array, jax.Array], None]:
        packed, key = carry
        k_act, k_reset = jax.random.split(jax.random.fold_in(key, t))
        s = (packed[:, 0], packed[:, 1], packed[:, 2], packed[:, 3])
        nxt, done = physics(s, jax.random.bernoulli(k_act, 0.5, (n,)))
        packed = jnp.where(done[:, None], fresh(k_reset, n).T, jnp.stack(nxt, axis=1))
        return (packed, key), None

    def run(key: jax.Array) -> jax.Array:
        init = fresh(key, n)
        ts = jnp.arange(steps)
        if variant == "concat":
            (packed, _), _ = jax.lax.scan(step_concat, (init.T, key), ts, unroll=unroll)
            return packed
        (s, _), _ = jax.lax.scan(step_split, (tuple(init), key), ts, unroll=unroll)
        return jnp.stack(s, axis=1)

    return run


def measure(variant: str, n: int, steps: int, repeats: int) -> dict[str, object]:
    key = jax.random.key(0)
    t0 = time.perf_counter()
    compiled = jax.jit(rollout_fn(variant, n, steps)).lower(key).compile()
    compile_s = time.perf_counter() - t0
    compiled(key).block_until_ready()
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        compiled(jax.random.key(r + 1)).block_until_ready()
        times.append(time.perf_counter() - t0)
    run_s = statistics.median(times)
    return {"variant": variant, "envs": n, "steps": steps, "device": str(jax.devices()[0]),
            "compile_s": round(compile_s, 4), "run_s": round(run_s, 6), "env_steps_per_sec": n * steps / run_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default="concat,split,unroll10")
    a = ap.parse_args()
    for v in a.variants.split(","):
        print(json.dumps(measure(v, a.envs, a.steps, a.repeats)), flush=True)


if __name__ == "__main__":
    main()

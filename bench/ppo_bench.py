#!/usr/bin/env python3
"""`make bench`'s PPO part (issue 29): time to solve, on one core, wall time
including compile, and training throughput (env-steps/s, updates included).

  cartsim   `cartsim train --algo ppo` (the fused, recorded rollout and the C
            update), CartPole-v1 (configs/ppo_cartpole.ini, and CleanRL's
            settings), Acrobot-v1 (solved at -100) and Pendulum-v1 (-200),
            each seed a run of its own; the first with an empty kernel cache
            (its compile is reported apart), the rest with it cached.
  example   python/examples/ppo.py (CleanRL's ppo.py in PyTorch) on cartsim's
            vector CartPole and on Gymnasium's, evaluated every 10 iterations.
  sb3       Stable-Baselines3's PPO through cartsim.sb3 (where installed).
  rejax     a JAX PPO in PureJaxRL's style (where `rejax` is installed).

"Solved": the greedy policy's mean return over 100 fresh episodes reaches the
threshold; every row's wall time includes its evaluations. Peers that are not
installed are listed as not run, with what to install. Writes bench/out/ppo.csv,
bench/plots/ppo.png (return against wall time, gnuplot) and a block of
bench/RESULTS.md between its PPO markers (bench.py keeps it: it sits below the
hand-edited line).

  python3 bench/ppo_bench.py [--seeds 10] [--peer-seeds 1] [--python PY] [--quick]
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "build", "cartsim")
OUT = os.path.join(ROOT, "bench", "out")
PLOTS = os.path.join(ROOT, "bench", "plots")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
BEGIN, END = "<!-- ppo: written by bench/ppo_bench.py -->", "<!-- ppo: end -->"


def log(msg):
    print("ppo_bench: " + msg, file=sys.stderr, flush=True)


def one_core(cmd):
    return (["taskset", "-c", "0"] if shutil.which("taskset") else []) + cmd


def cartsim_run(args, seed, cache):
    """One `cartsim train --json` run: its result line and its (seconds, return) curve."""
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    t0 = time.time()
    # in the cache's folder: a config's `out` (cartpole_ppo.pol) lands there, not in the checkout
    p = subprocess.run(one_core([CLI, "train", "--json", "--threads", "1", "--seed", str(seed)] + args),
                       capture_output=True, text=True, env=env, cwd=cache)
    wall = time.time() - t0
    if p.returncode != 0:
        raise RuntimeError("cartsim train %s: %s" % (" ".join(args), p.stderr.strip()))
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    result = [x for x in lines if x["type"] == "result"][0]
    curve = [(x["elapsed_s"], x["mean_return"]) for x in lines if x["type"] == "iteration"
             and x["mean_return"] is not None]
    return dict(result, wall_s=wall, curve=curve)


def cartsim_rows(a):
    cache = tempfile.mkdtemp(prefix="cartsim-ppo-bench-")
    rows = []
    cases = [("CartPole-v1", "configs/ppo_cartpole.ini", ["--config", os.path.join(ROOT, "configs/ppo_cartpole.ini")],
              a.seeds),
             ("CartPole-v1", "CleanRL's settings", ["--env", "cartpole", "--algo", "ppo"], a.seeds),
             ("Acrobot-v1", "CleanRL's settings", ["--env", "acrobot", "--algo", "ppo"], max(1, a.seeds // 3)),
             ("Pendulum-v1", "CleanRL's settings, target -200",
              ["--env", "pendulum", "--algo", "ppo", "--target", "-200"], max(1, a.seeds // 3))]
    for env, what, args, seeds in cases:
        runs = []
        for k, seed in enumerate(range(1, seeds + 1)):
            if k == 0 and "config" not in what:
                shutil.rmtree(cache, ignore_errors=True)   # this environment's first run compiles
                os.makedirs(cache, mode=0o700)
            r = cartsim_run(args, seed, cache)
            log("cartsim %s %s seed %d: solved %s, %d env-steps, %.2f s (compile %.2f s)"
                % (env, what, seed, r["solved"], r["env_steps"], r["wall_s"], r["compile_s"]))
            runs.append(r)
        rows.append(summarize("cartsim", env, what, runs))
    shutil.rmtree(cache, ignore_errors=True)
    return rows


def summarize(who, env, what, runs):
    """Median and worst wall time over the seeds, each with the kernel cached
    (cartsim's first seed, which compiled, counted as its time less the
    compile plus a cached open); the first seed's cold compile apart."""
    cached_open = 0.02 if who == "cartsim" else 0.0   # JAX keeps no compiled kernel between runs here
    walls = sorted(r["wall_s"] - r["compile_s"] + (cached_open if r["compile_s"] > 1 else 0) for r in runs)
    rate = [r["env_steps"] / max(r["wall_s"] - r["compile_s"], 1e-9) for r in runs]
    median_run = sorted(runs, key=lambda r: r["wall_s"] - r["compile_s"])[len(runs) // 2]
    return {"who": who, "env": env, "what": what, "seeds": len(runs),
            "solved": sum(1 for r in runs if r["solved"]),
            "median_s": statistics.median(walls), "worst_s": walls[-1],
            "cold_compile_s": runs[0]["compile_s"], "first_run_s": runs[0]["wall_s"],
            "median_steps": statistics.median(r["env_steps"] for r in runs),
            "steps_per_s": statistics.median(rate), "curve": median_run["curve"]}


def example_rows(a):
    rows = []
    for backend in ("cartsim", "gymnasium"):
        runs = []
        for seed in range(1, a.peer_seeds + 1):
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
                       CARTSIM_LIBRARY=os.path.join(ROOT, "build", "libcartsim.so"),
                       CARTSIM_HEADER=os.path.join(ROOT, "sim", "cartsim.h"))
            t0 = time.time()
            p = subprocess.run(one_core([a.python, os.path.join(ROOT, "python/examples/ppo.py"), "--backend", backend,
                                         "--seed", str(seed), "--eval-every", "10", "--stop-at", "475"]),
                               capture_output=True, text=True, env=env)
            wall = time.time() - t0
            if p.returncode != 0:
                log("example on %s: %s" % (backend, p.stderr.strip()[-300:]))
                break
            r = json.loads(p.stdout.strip().splitlines()[-1])
            solved = r["solved_at_seconds"] is not None
            curve = [(c[0], c[2]) for c in r["curve"] if c[2] is not None]
            log("example on %s seed %d: solved %s, %d env-steps, %.1f s" % (backend, seed, solved,
                                                                        r["total_timesteps"], wall))
            runs.append({"solved": solved, "env_steps": r["total_timesteps"], "wall_s": wall, "compile_s": 0.0,
                         "curve": curve})
        if runs:
            rows.append(summarize("python/examples/ppo.py", "CartPole-v1", "on %s's vector env" % backend, runs))
    return rows


# Stable-Baselines3's PPO with its own defaults (2048 steps x 8 envs a rollout, 10 epochs of
# 64-sample minibatches, lr 3e-4, no annealing): its EvalCallback scores the deterministic
# (greedy) policy on 100 episodes every 10,000 env-steps and stops training at 475; solved:
# the process's wall time when it stops (imports included), the curve: each evaluation's.
SB3_SCRIPT = r"""
import time
t0 = time.time()
import json, sys
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback, StopTrainingOnRewardThreshold
from cartsim.sb3 import CartsimVecEnv
torch.set_num_threads(1)
seed = int(sys.argv[1])
curve = []

class Record(BaseCallback):
    def _on_step(self):
        curve.append((time.time() - t0, self.parent.last_mean_reward))
        return True

env = CartsimVecEnv("CartPole-v1", num_envs=8, threads=1, seed=seed)
stop = StopTrainingOnRewardThreshold(reward_threshold=475, verbose=0)
ev = EvalCallback(CartsimVecEnv("CartPole-v1", num_envs=10, threads=1, seed=seed + 1000), n_eval_episodes=100,
                  eval_freq=1250, deterministic=True, callback_on_new_best=stop, callback_after_eval=Record(),
                  verbose=0)
model = PPO("MlpPolicy", env, seed=seed, verbose=0, device="cpu").learn(500_000, callback=ev)
print(json.dumps({"solved": bool(ev.best_mean_reward >= 475), "steps": int(model.num_timesteps),
                  "seconds": time.time() - t0, "curve": curve}))
"""


def sb3_rows(a):
    if subprocess.run([a.python, "-c", "import stable_baselines3"], capture_output=True).returncode != 0:
        return [{"who": "Stable-Baselines3 PPO", "env": "CartPole-v1", "what": "not run: pip install stable-baselines3"}]
    runs = []
    for seed in range(1, a.peer_seeds + 1):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
                   CARTSIM_LIBRARY=os.path.join(ROOT, "build", "libcartsim.so"),
                   CARTSIM_HEADER=os.path.join(ROOT, "sim", "cartsim.h"))
        t0 = time.time()
        p = subprocess.run(one_core([a.python, "-c", SB3_SCRIPT, str(seed)]), capture_output=True, text=True, env=env)
        if p.returncode != 0:
            log("sb3: %s" % p.stderr.strip()[-300:])
            break
        r = json.loads(p.stdout.strip().splitlines()[-1])
        wall = time.time() - t0
        log("sb3 seed %d: solved %s, %d env-steps, %.1f s" % (seed, r["solved"], r["steps"], wall))
        runs.append({"solved": r["solved"], "env_steps": r["steps"], "wall_s": wall, "compile_s": 0.0,
                     "curve": r["curve"]})
    return [summarize("Stable-Baselines3 PPO", "CartPole-v1", "through cartsim.sb3 (its defaults, 8 envs)", runs)] \
        if runs else []


# rejax's PPO on gymnax's CartPole-v1 with PureJaxRL's CartPole settings (its ppo.py's
# config: 4 envs x 128 steps, 4 epochs of 4 minibatches, lr 2.5e-4, tanh 64x64, clip 0.2,
# ent 0.01, vf 0.5, grad norm 0.5, 500k steps). What rejax does not do as PureJaxRL does:
# the learning rate is not annealed (rejax takes a constant), the actor and critic are two
# networks with two Adam states and two losses (PureJaxRL: one network, one loss), and its
# "max_grad_norm" clips each gradient element (optax.clip), not the global norm.
# Trained in chunks of 10 iterations (5120 env-steps), one jitted call each that ends with
# our greedy evaluation (argmax of the actor's logits, 100 episodes of gymnax's CartPole,
# in the same jitted call); the chunk call is compiled ahead (its compile timed apart).
# Solved: the wall time, from before `import jax`, at which such an evaluation first
# reaches 475; the script stops there.
REJAX_SCRIPT = r"""
import time
t0 = time.time()
import json, sys
import jax, jax.numpy as jnp
from rejax import PPO
from rejax.evaluate import evaluate
seed, chunk, budget, target = int(sys.argv[1]), 5120, 500_000, 475.0
config = dict(env="CartPole-v1", num_envs=4, num_steps=128, num_epochs=4, num_minibatches=4,
              learning_rate=2.5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
              max_grad_norm=0.5, normalize_observations=False, normalize_rewards=False,
              agent_kwargs={"activation": "tanh", "hidden_layer_sizes": (64, 64)},
              total_timesteps=chunk, eval_freq=chunk, skip_initial_evaluation=True)

def greedy_eval(algo, ts, rng):
    def act(obs, rng):
        dist = algo.actor.apply(ts.actor_ts.params, obs[None], method="_action_dist")
        return jnp.squeeze(jnp.argmax(dist.logits, axis=-1))
    lengths, returns = evaluate(act, rng, algo.env, algo.env_params, 100, algo.env_params.max_steps_in_episode)
    return returns.mean()

algo = PPO.create(**config).replace(eval_callback=greedy_eval)
c0 = time.time()
ts = jax.block_until_ready(jax.jit(algo.init_state)(jax.random.PRNGKey(seed)))
step = jax.jit(lambda ts: algo.train(train_state=ts)).lower(ts).compile()
compile_s = time.time() - c0   # XLA: the initialization's and the chunk's
curve, steps, solved = [], 0, False
while steps < budget and not solved:
    ts, ev = step(ts)
    score = float(ev[-1])
    steps += chunk
    curve.append((time.time() - t0, steps, score))
    solved = score >= target
print(json.dumps({"solved": solved, "steps": steps, "seconds": time.time() - t0, "compile_s": compile_s,
                  "imports_s": c0 - t0, "curve": curve, "devices": str(jax.devices())}))
"""


def rejax_rows(a):
    if subprocess.run([a.python, "-c", "import rejax"], capture_output=True).returncode != 0:
        return [{"who": "JAX PPO (PureJaxRL style)", "env": "CartPole-v1", "what": "not run: pip install rejax"}]
    # one core: the affinity (one_core) holds every thread XLA starts to it; and no Eigen thread pool
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_cpu_multi_thread_eigen=false", OMP_NUM_THREADS="1")
    runs = []
    for seed in range(1, a.peer_seeds + 1):
        t0 = time.time()
        p = subprocess.run(one_core([a.python, "-c", REJAX_SCRIPT, str(seed)]), capture_output=True, text=True,
                           env=env)
        wall = time.time() - t0
        if p.returncode != 0:
            log("rejax: %s" % p.stderr.strip()[-300:])
            break
        r = json.loads(p.stdout.strip().splitlines()[-1])
        log("rejax seed %d: solved %s, %d env-steps, %.1f s (XLA compile %.1f s)" % (seed, r["solved"], r["steps"],
                                                                                 wall, r["compile_s"]))
        runs.append({"solved": r["solved"], "env_steps": r["steps"], "wall_s": wall, "compile_s": r["compile_s"],
                     "curve": [(c[0], c[2]) for c in r["curve"]]})
    return [summarize("JAX PPO (PureJaxRL style)", "CartPole-v1",
                      "rejax 0.1.3 on gymnax, PureJaxRL's CartPole settings", runs)] if runs else []


def write_csv(rows):
    os.makedirs(OUT, exist_ok=True)
    fields = ["who", "env", "what", "seeds", "solved", "median_s", "worst_s", "cold_compile_s", "first_run_s",
              "median_steps", "steps_per_s"]
    with open(os.path.join(OUT, "ppo.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def plot(rows):
    """Return against wall time, the median seed of each CartPole row."""
    if not shutil.which("gnuplot"):
        log("no gnuplot: no plot (apt-get install gnuplot-nox)")
        return False
    os.makedirs(PLOTS, exist_ok=True)
    series = [r for r in rows if r.get("curve") and r["env"] == "CartPole-v1"]
    tmp = tempfile.mkdtemp()
    cmds = []
    for k, r in enumerate(series):
        path = os.path.join(tmp, "%d.dat" % k)
        with open(path, "w") as f:
            for t, ret in r["curve"]:
                f.write("%g %g\n" % (max(t, 1e-3), ret))
        cmds.append("'%s' using 1:2 with lines lw 2 title '%s, %s'" % (path, r["who"], r["what"].replace("'", "")))
    script = ("set terminal pngcairo size 1000,560 font 'DejaVu Sans,10' noenhanced\nset output '%s'\n"
              "set logscale x\nset xlabel 'wall time, s (one core, compile included; log scale)'\n"
              "set ylabel 'mean return (cartsim, example: training episodes; SB3, rejax: greedy evaluation)'\nset key bottom right\nset grid\n"
              "set arrow from graph 0, first 475 to graph 1, first 475 nohead dt 2 lc rgb 'gray'\n"
              "set title 'PPO on CartPole-v1: return against wall time (median seed)'\nplot %s\n"
              % (os.path.join(PLOTS, "ppo.png"), ", ".join(cmds)))
    ok = subprocess.run(["gnuplot"], input=script, text=True).returncode == 0
    shutil.rmtree(tmp, ignore_errors=True)
    return ok


def fmt(x, digits=3):
    return "%.*g" % (digits, x) if isinstance(x, (int, float)) else "-"


def results_block(rows, a, plotted):
    load = os.getloadavg()
    lines = [BEGIN, "", "## PPO: time to solve (issue 29)", "",
             "Written by `bench/ppo_bench.py` (`make bench`), %s, load average %.1f %.1f %.1f at the end; "
             "one core (`taskset -c 0`, `--threads 1`). Solved: the greedy policy's mean return over 100 fresh "
             "episodes reaches the threshold (CartPole 475, Acrobot -100, Pendulum -200); every wall time "
             "includes the run's evaluations and the kernel's open from the cache; the first seed's run, with an "
             "empty kernel cache, compiles: its compile and whole wall time are apart. env-steps/s: training "
             "throughput, rollouts and updates." % (time.strftime("%Y-%m-%d %H:%M"), *load), "",
             "How each row's time to solve is measured: **cartsim**: `cartsim train --json`'s own greedy evaluation "
             "(100 episodes); the process's wall time, less its compile on the first seed. **python/examples/ppo.py**: "
             "CleanRL's settings; a greedy evaluation of 100 episodes every 10 iterations (5120 env-steps) stops it; "
             "the process's wall time (PyTorch's import and one more, final evaluation included). "
             "**Stable-Baselines3**: its defaults; its EvalCallback's deterministic evaluation of 100 episodes every "
             "10,000 env-steps stops it; the process's wall time, imports included. **rejax**: PureJaxRL's CartPole "
             "settings (but a constant learning rate, two networks with two Adam states, element-wise gradient "
             "clipping: rejax's PPO); chunks of 5120 env-steps, each one compiled XLA call ending in a greedy "
             "evaluation of 100 episodes; the process's wall time to the first evaluation at 475, imports included, "
             "less XLA's compile (shown apart: JAX has no kernel cache on by default, so every run pays it). "
             "The Python peers: one thread (`torch.set_num_threads(1)`; XLA's CPU backend at one thread), "
             "%d seed(s) each." % a.peer_seeds, "",
             "| who | env | settings | seeds solved | median s | worst s | cold compile s | first run, cold, s "
             "| median env-steps | env-steps/s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "seeds" not in r:
            lines.append("| %s | %s | %s | - | - | - | - | - | - | - |" % (r["who"], r["env"], r["what"]))
            continue
        cartsim = r["who"] == "cartsim"   # its later seeds open the cached kernel; rejax compiles every run
        lines.append("| %s | %s | %s | %d of %d | %s | %s | %s | %s | %s | %s |" % (
            r["who"], r["env"], r["what"], r["solved"], r["seeds"], fmt(r["median_s"]), fmt(r["worst_s"]),
            fmt(r["cold_compile_s"]) if r["cold_compile_s"] else "-",
            fmt(r["first_run_s"]) if cartsim or r["cold_compile_s"] else "-",
            fmt(r["median_steps"], 6), fmt(r["steps_per_s"])))
    if plotted:
        lines += ["", "![PPO on CartPole: return against wall time](plots/ppo.png)"]
    lines += ["", END]
    return "\n".join(lines) + "\n"


def write_results(block):
    text = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END) + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(RESULTS, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=10, help="cartsim's seeds per CartPole row (a third for the others)")
    p.add_argument("--peer-seeds", type=int, default=1, help="seeds of each Python peer (minutes each)")
    peers_python = os.path.join(ROOT, "build", "ppo-peers-venv", "bin", "python")
    p.add_argument("--python", default=os.environ.get("PPO_BENCH_PYTHON", peers_python),
                   help="a Python with torch and gymnasium for the peers (`make ppo-peers-venv` makes one)")
    p.add_argument("--quick", action="store_true", help="3 seeds, no peers")
    p.add_argument("--no-peers", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.seeds, a.no_peers = 3, True
    rows = cartsim_rows(a)
    if not a.no_peers:
        if os.path.exists(a.python) and subprocess.run([a.python, "-c", "import torch, gymnasium"],
                                                        capture_output=True).returncode == 0:
            rows += example_rows(a) + sb3_rows(a)
        else:
            rows.append({"who": "python/examples/ppo.py", "env": "CartPole-v1",
                         "what": "not run: no Python with torch and gymnasium (make ppo-peers-venv, or --python)"})
        rows += rejax_rows(a)
    write_csv(rows)
    write_results(results_block(rows, a, plot(rows)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cartsim next to what users would pick instead, on the CPU, in one run.

Same work for everyone: CartPole-v1, uniformly random actions, auto-reset,
N environments (2048 and 65,536), on 1 and 2 cores (each measurement runs in
its own process pinned with taskset). Each figure is the median of repeated
timed runs after a warm-up run that also sizes them (about --min-time seconds
each); compile time is reported apart.

  Gymnasium  CartPoleVectorEnv (NumPy), gymnasium.make_vec(..., "vector_entry_point");
             actions drawn with NumPy on the host before the timing (a pool
             of 64 arrays, cycled: every Python peer steps through the same
             pool, so step() alone is timed); next-step auto-reset.
  gymnax     jax.jit of a lax.scan of U steps of the vmap'ed env.step (same-step
             auto-reset) with the actions drawn inside (jax.random): XLA on
             the CPU, the seed paper's own system. Also an unroll sweep of the
             scan (XLA's compile time and run time against unroll). The
             worker runs the other environments gymnax and cartsim both have
             too (--gymnax-env, random actions of each one's space): bench.py's
             section 6 runs it round-robin with cartsim's rollouts.
  EnvPool    envpool.make("CartPole-v1", env_type="gymnasium", num_envs=N,
             num_threads=T), synchronous step() with the same NumPy actions.
  cartsim    build/bench/rollout_bench: the fused rollout (random actions drawn
             in the kernel, same-step auto-reset) and the step API (actions
             drawn on the host, cs_env_step, next-step auto-reset).
  cartsim Python  the package in python/: VectorEnv.step(actions) with the
             same NumPy actions, one thread (the row to set against the step API's);
             --envs 1 gives the cost of one Python call.

With --suite it measures instead the references of the environment suite
(issue 27), one core, 2048 environments, and prints env-steps/s per environment:
gymnax 1.0.1's jit(lax.scan(vmap(step))) (this worker) for bsuite, MinAtar and
misc, Gymnasium 1.4.0's make_vec(sync) for the toy text, each in the pinned venv
of tests/golden_suite/references.py (the golden data's references):

  python3 bench/peers.py --suite [--only Breakout-MinAtar,Taxi-v4] [--envs 2048]

Run with the system python3: it creates build/bench-venv (python3 -m venv) and
pip-installs the pinned peers there, each peer on its own, so a peer that
cannot be installed or fails is reported as skipped with the reason. Results go
to OUT/peers.csv and OUT/xla_unroll.csv; one JSON line per measurement to
stdout.

  python3 bench/peers.py [--out bench/out] [--envs 2048,65536] [--threads 1,2]
                         [--repeat 3] [--min-time 0.3] [--xla-unroll 1,2,5,10]
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "build", "bench-venv")
STAMP = os.path.join(VENV, "cartsim-peers.json")

# Pinned so that a run can be repeated; all of these install on Python 3.11.
# gymnax 1.0.x wants gymnasium < 1.4, and cartsim follows Gymnasium 1.4, so
# gymnax stays at 0.0.9 (which imports six without declaring it).
PINS = {
    "gymnasium": ["numpy==2.4.6", "gymnasium==1.4.0"],
    "gymnax": ["jax[cpu]==0.10.2", "jaxlib==0.10.2", "flax==0.12.8", "gymnax==0.0.9", "six==1.17.0"],
    "envpool": ["envpool==1.2.5"],
    "cartsim-python": ["cffi==1.17.1"],   # the package itself comes from python/ (PYTHONPATH)
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the venv

def ensure_venv():
    """Create the venv and install each peer's pins; returns {peer: None | reason}."""
    py = os.path.join(VENV, "bin", "python")
    state = {}
    if os.path.exists(STAMP):
        try:
            with open(STAMP) as f:
                state = json.load(f)
        except (OSError, ValueError):
            state = {}
    if not os.path.exists(py):
        log("peers: creating %s" % os.path.relpath(VENV, ROOT))
        r = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, text=True)
        if r.returncode != 0:
            reason = "python3 -m venv failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
            return {peer: reason for peer in PINS}
        subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], capture_output=True)
        state = {}
    status = {}
    for peer, pins in PINS.items():
        prev = state.get(peer)
        if prev and prev.get("pins") == pins and prev.get("ok"):
            status[peer] = None
            continue
        log("peers: pip install %s" % " ".join(pins))
        t0 = time.time()
        r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check"] + pins,
                           capture_output=True, text=True)
        ok = r.returncode == 0
        reason = None
        if not ok:
            lines = [l for l in (r.stderr or r.stdout).strip().splitlines() if l.strip()]
            reason = "pip install failed: " + (lines[-1] if lines else "exit %d" % r.returncode)
        state[peer] = {"pins": pins, "ok": ok, "reason": reason, "seconds": round(time.time() - t0, 1)}
        status[peer] = reason
        with open(STAMP, "w") as f:
            json.dump(state, f, indent=1)
    INSTALL_S[0] = sum(v.get("seconds", 0) for v in state.values() if isinstance(v, dict))
    return status


INSTALL_S = [0.0]   # seconds pip took when the venv was made (kept in the stamp)


# ------------------------------------------------------------- the workers
# Each runs inside the venv, in its own pinned process, and prints one JSON line.

def timed_runs(run, n_envs, repeat, min_time, unit_steps, max_units=100000):
    """Warm up with one unit (sizing the runs from it), then `repeat` runs of
    `units` units; returns (steps per run, [seconds])."""
    t0 = time.perf_counter()
    run(1)
    first = time.perf_counter() - t0
    # A second, longer warm-up gives a better estimate than the first call.
    probe = max(1, min(max_units, int(0.05 / max(first, 1e-6))))
    t0 = time.perf_counter()
    run(probe)
    per_unit = (time.perf_counter() - t0) / probe
    units = max(1, min(max_units, int(round(min_time / max(per_unit, 1e-9)))))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(units)
        times.append(time.perf_counter() - t0)
    return units * unit_steps, times


# The Python peers step with actions drawn before the timing (a pool of
# arrays, cycled), so that each figure is the cost of step(actions) itself and
# not of NumPy's generator (about 12 us of 4096 draws here, as much as half a
# cartsim step); every Python peer steps through the same pool.
ACTION_POOL = 64


def timed_steps(env, a, dtype=None):
    """timed_runs of env.step over the pool of random CartPole actions (int64, or dtype)."""
    import numpy as np
    rng = np.random.default_rng(1)
    actions = [rng.integers(0, 2, a.envs, dtype=dtype or np.int64) for _ in range(ACTION_POOL)]

    def run(steps):
        for i in range(steps):
            env.step(actions[i % ACTION_POOL])

    return timed_runs(run, a.envs, a.repeat, a.min_time, 1)


def worker_gymnasium(a):
    import numpy as np
    import gymnasium as gym
    env = gym.make_vec("CartPole-v1", num_envs=a.envs, vectorization_mode="vector_entry_point")
    env.reset(seed=1)
    steps, times = timed_steps(env, a)
    return {"version": "gymnasium " + gym.__version__ + ", numpy " + np.__version__,
            "impl": type(env.unwrapped).__name__, "steps": steps, "runs_s": times, "autoreset": "next_step"}


def random_actions(space, key, n):
    """n uniformly random actions of a gymnax space, in one draw: integers
    for a Discrete space, reals in the bounds for a Box."""
    import jax
    if hasattr(space, "n"):
        return jax.random.randint(key, (n,), 0, space.n)
    return jax.random.uniform(key, (n,) + tuple(space.shape), minval=space.low, maxval=space.high)


def gymnax_make(env_id):
    """gymnax.make(env_id), or the gymnax-style port written here for an id of GYMNAX_STYLE_ENVS."""
    if env_id in GYMNAX_STYLE_ENVS:
        import importlib
        module, cls = GYMNAX_STYLE_ENVS[env_id]
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # bench/, where the port is
        env = getattr(importlib.import_module(module), cls)()
        return env, env.default_params
    import gymnax
    return gymnax.make(env_id)


def gymnax_rollout(n, length, unroll, env_id="CartPole-v1"):
    import jax
    env, params = gymnax_make(env_id)
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    space = env.action_space(params)

    def rollout(key, state):
        def body(carry, _):
            key, state = carry
            key, k_act, k_step = jax.random.split(key, 3)
            action = random_actions(space, k_act, n)
            out = step(jax.random.split(k_step, n), state, action, params)
            # gymnax 0.0.9: (obs, state, reward, done, info); 1.0: (obs, state, reward, terminated, truncated, info)
            state, done = out[1], out[3] if len(out) == 5 else out[3] | out[4]
            return (key, state), done.sum()
        (key, state), done = jax.lax.scan(body, (key, state), None, length=length, unroll=unroll)
        return key, state, done.sum()

    key = jax.random.PRNGKey(1)
    _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n), params)
    t0 = time.perf_counter()
    compiled = jax.jit(rollout).lower(key, state).compile()
    compile_s = time.perf_counter() - t0
    return compiled, key, state, compile_s


def worker_gymnax(a):
    import jax
    import gymnax
    n = a.envs
    length = max(1, min(1000, (1 << 21) // n))   # steps per call: about 2M env-steps
    compiled, key, state, compile_s = gymnax_rollout(n, length, 1, a.gymnax_env)
    carry = [key, state]

    def run(calls):
        for _ in range(calls):
            carry[0], carry[1], done = compiled(carry[0], carry[1])
        jax.block_until_ready(carry[1])

    steps, times = timed_runs(run, n, a.repeat, a.min_time, length)
    port = gymnax_port(a.gymnax_env)
    from importlib.metadata import version   # gymnax 0.0.9 and 1.0.1 have no __version__
    return {"version": "jax %s, gymnax %s" % (jax.__version__, version("gymnax")),
            "impl": "%s%s: jit(lax.scan(vmap(step)), length=%d)"
                    % (a.gymnax_env, " (gymnax-style, %s)" % port if port else "", length),
            "steps": steps, "runs_s": times, "compile_s": compile_s, "autoreset": "same_step"}


def worker_gymnax_unroll(a):
    """XLA's compile and run time against the scan's unroll factor."""
    import jax
    n, length = a.envs, 1000
    out = []
    for u in a.unroll:
        compiled, key, state, compile_s = gymnax_rollout(n, length, u)
        carry = [key, state]

        def run(calls):
            for _ in range(calls):
                carry[0], carry[1], done = compiled(carry[0], carry[1])
            jax.block_until_ready(carry[1])

        steps, times = timed_runs(run, n, a.repeat, a.min_time, length)
        out.append({"unroll": u, "compile_s": compile_s, "steps": steps, "runs_s": times})
        print(json.dumps({"progress": out[-1]}), file=sys.stderr, flush=True)
        if compile_s > a.compile_cap:
            break   # larger factors only compile longer
    return {"version": "jax " + jax.__version__, "sweep": out}


def worker_toy_text(a):
    """Gymnasium's own vector env of a toy-text environment of the suite (they have no
    vector entry point: SyncVectorEnv of gym.make), stepped with random actions drawn
    before the timing (a pool, cycled, as timed_steps does)."""
    import numpy as np
    import gymnasium as gym
    env = gym.make_vec(a.suite_env, num_envs=a.envs, vectorization_mode="sync")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    n = env.single_action_space.n
    actions = [rng.integers(0, n, a.envs, dtype=np.int64) for _ in range(ACTION_POOL)]

    def run(steps):
        for i in range(steps):
            env.step(actions[i % ACTION_POOL])

    steps, times = timed_runs(run, a.envs, a.repeat, a.min_time, 1)
    return {"version": "gymnasium " + gym.__version__ + ", numpy " + np.__version__,
            "impl": "%s: make_vec(sync), %s" % (a.suite_env, type(env).__name__), "steps": steps,
            "runs_s": times, "autoreset": "next_step"}


def worker_envpool(a):
    import numpy as np
    import envpool
    env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=a.envs, batch_size=a.envs,
                       num_threads=a.threads, seed=1)
    env.reset()
    steps, times = timed_steps(env, a, np.int32)
    return {"version": "envpool " + envpool.__version__, "impl": "sync step, num_threads=%d" % a.threads,
            "steps": steps, "runs_s": times, "autoreset": "next_step"}


def worker_cartsim_python(a):
    """envs.step(actions) of the Python package (python/), NumPy actions as for the peers."""
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ.setdefault("CARTSIM_LIBRARY", os.path.join(ROOT, "build", "libcartsim.so"))
    import cartsim
    env = cartsim.make_vec("CartPole-v1", num_envs=a.envs, threads=a.threads, backend="cpu")
    env.reset(seed=1)
    steps, times = timed_steps(env, a, np.dtype(a.action_dtype).type)
    return {"version": "cartsim %s (python/), numpy %s" % (cartsim.__version__, np.__version__),
            "impl": "VectorEnv.step, %s actions, threads=%d" % (a.action_dtype, a.threads), "steps": steps,
            "runs_s": times,
            "autoreset": "next_step"}


# The environments besides CartPole-v1 that gymnax 0.0.9 and cartsim (envs/) both have
# (bench.py's section 6 sets each against cartsim).
GYMNAX_ENVS = ("Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1")
# cartsim's environments gymnax lacks, written in bench/ as gymnax writes its own:
# id -> (module, Environment class), for the gymnax worker and section 6.
GYMNAX_STYLE_ENVS = {"SpringMass-v0": ("spring_mass_jax", "SpringMass")}


def gymnax_port(env_id):
    """The source of env_id's gymnax-style port (bench/M.py), or None for gymnax's own."""
    port = GYMNAX_STYLE_ENVS.get(env_id)
    return "bench/%s.py" % port[0] if port else None


WORKERS = {"gymnasium": worker_gymnasium, "cartsim-python": worker_cartsim_python, "gymnax": worker_gymnax, "gymnax-unroll": worker_gymnax_unroll,
           "envpool": worker_envpool, "toy-text": worker_toy_text}


def suite_references():
    """tests/golden_suite/references.py: the suite's references (the golden data's
    pinned gymnax 1.0.1 and Gymnasium 1.4.0 venvs, shared with the generator)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "golden_suite"))
    import references
    return references


def cartsim_suite_rate(env_id, n, repeat, timeout):
    """cartsim's fused rollout of env_id (random actions, one thread, pinned as the
    reference is), sized to about half a second, the median of `repeat` runs; run
    right after the reference's, so both see the same load."""
    cmd = lambda steps: pinned(1, [os.path.join(ROOT, "build", "cartsim"), "run", "--env", env_id, "--envs", str(n),
                                   "--steps", str(steps), "--threads", "1", "--unroll", "10", "--json"])
    def rate(steps):
        try:
            r = subprocess.run(cmd(steps), capture_output=True, text=True, timeout=timeout)
            return json.loads(r.stdout)["env_steps_per_sec"] if r.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError, KeyError):
            return None
    first = rate(100)   # compiles (or finds the kernel), sizes the runs
    if not first:
        return ""
    steps = max(100, int(0.5 * first / n))
    rates = [x for x in (rate(steps) for _ in range(repeat)) if x]
    return statistics.median(rates) if rates else ""


def suite_main(a):
    """Every environment of the suite (issue 27) with its reference's rollout rate,
    measured as for the classic ones: gymnax's jit(lax.scan(vmap(step))) of
    bench's worker for the gymnax environments, Gymnasium's vector env for the toy
    text; `--envs` environments (2048), one core (taskset), medians of `--repeat`
    timed runs. Prints a JSON line per environment, then a table; OUT/suite_peers.csv."""
    refs = suite_references()
    only = [x for x in a.only.split(",") if x]
    rows = []
    t_env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    me = os.path.abspath(__file__)
    for ref, env_id in refs.SUITE_IDS:
        if only and env_id not in only:
            continue
        reason = refs.ensure_venv(ref, log)
        worker = ["--worker", "gymnax", "--gymnax-env", env_id] if ref == "gymnax" else \
                 ["--worker", "toy-text", "--suite-env", env_id]
        if reason:
            res = {"error": reason}
        else:
            res = run_json(pinned(1, [refs.venv_python(ref), me] + worker +
                                  ["--envs", str(a.envs_list[0]), "--threads", "1", "--repeat", str(a.repeat),
                                   "--min-time", str(a.min_time)]), a.timeout, t_env)
        row = {"env": env_id, "reference": "gymnax (XLA, jit(scan(vmap)))" if ref == "gymnax" else
               "Gymnasium (SyncVectorEnv)", "envs": a.envs_list[0], "threads": 1}
        row["cartsim_env_steps_per_sec"] = cartsim_suite_rate(env_id, a.envs_list[0], a.repeat, a.timeout)
        if "error" in res:
            row.update(status="skipped", reason=res["error"])
        else:
            row.update(status="ok", env_steps_per_sec=median_rate(a.envs_list[0], res["steps"], res["runs_s"]),
                       median_s=statistics.median(res["runs_s"]), steps=res["steps"],
                       runs_s=" ".join("%.4f" % x for x in res["runs_s"]), compile_s=res.get("compile_s", ""),
                       version=res.get("version", ""), impl=res.get("impl", ""), busy=res.get("busy", False))
        rows.append(row)
        print(json.dumps(row), flush=True)
    os.makedirs(a.out, exist_ok=True)
    fields = ["env", "reference", "envs", "threads", "status", "env_steps_per_sec", "cartsim_env_steps_per_sec",
              "median_s", "steps", "runs_s", "compile_s", "version", "impl", "busy", "reason"]
    with open(os.path.join(a.out, "suite_peers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow(row)
    print("\n| environment | reference (1 core, %d envs) | its env-steps/s | cartsim's | ratio |" % a.envs_list[0])
    print("|---|---|---|---|---|")
    for row in rows:
        mine = row.get("cartsim_env_steps_per_sec")
        if row["status"] != "ok":
            print("| %s | %s | skipped: %s | %s | |" % (row["env"], row["reference"], row["reason"],
                                                       "%.3g" % mine if mine else ""))
            continue
        ref = row["env_steps_per_sec"]
        print("| %s | %s | %.3g%s | %s | %s |" % (row["env"], row["reference"], ref, " (busy)" if row.get("busy") else "",
                                                  "%.3g" % mine if mine else "-", "%.1fx" % (mine / ref) if mine else "-"))


def worker_main(a):
    import warnings
    warnings.filterwarnings("ignore")
    try:
        res = WORKERS[a.worker](a)
    except Exception as e:   # reported as skipped by the caller
        res = {"error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")}
    print(json.dumps(res), flush=True)


# ------------------------------------------------------------ the runner

def cpus_for(threads):
    return ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:threads])


def pinned(threads, cmd):
    if shutil.which("taskset"):
        return ["taskset", "-c", cpus_for(threads)] + cmd
    return cmd


GATE = [None]   # set by main(): called before each measurement


def run_json(cmd, timeout, env=None, threads=1):
    quiet = GATE[0](threads) if GATE[0] else True
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if not lines:
        tail = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
        return {"error": tail}
    res = json.loads(lines[-1])
    res["busy"] = not quiet
    return res


def median_rate(n, steps, times):
    return n * steps / statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--envs", default="2048,65536")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--python-envs", default="4096,1",
                    help="sizes where only the step()s are compared, one thread ('' to skip)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--xla-unroll", default="1,2,5,10", help="scan unroll factors for XLA ('' to skip)")
    ap.add_argument("--compile-cap", type=float, default=30.0,
                    help="stop the XLA unroll sweep after a compile longer than this (s)")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--quiet-wait", type=float, default=120,
                    help="seconds in all to wait for other processes to leave the cores idle (bench.py's gate)")
    ap.add_argument("--worker", choices=sorted(WORKERS))
    ap.add_argument("--gymnax-env", default="CartPole-v1", help="the gymnax worker's environment")
    ap.add_argument("--suite", action="store_true",
                    help="the environment suite's references only (issue 27): env-steps/s of each, one core")
    ap.add_argument("--only", default="", help="--suite: comma-separated ids (default: all)")
    ap.add_argument("--suite-env", default="FrozenLake-v1", help="the toy-text worker's environment")
    ap.add_argument("--unroll", default="1")
    ap.add_argument("--action-dtype", default="int64", choices=("int64", "int32"),
                    help="the cartsim-python worker's actions")
    a = ap.parse_args()
    a.envs_list = [int(x) for x in a.envs.split(",") if x]
    if a.worker:
        a.envs = a.envs_list[0]
        a.threads = int(a.threads.split(",")[0])
        a.unroll = [int(x) for x in a.unroll.split(",") if x]
        return worker_main(a)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench as suite   # the quiet-machine gate, shared with the rest of the suite
    suite.QUIET["budget_s"] = a.quiet_wait
    GATE[0] = suite.quiet_gate
    if a.suite:
        a.envs_list = [int(x) for x in (a.envs if a.envs != "2048,65536" else "2048").split(",") if x]
        return suite_main(a)
    ncpu = len(os.sched_getaffinity(0))
    threads_list = [t for t in (int(x) for x in a.threads.split(",") if x) if t <= ncpu]
    os.makedirs(a.out, exist_ok=True)
    t_setup = time.time()
    status = ensure_venv()
    setup_s = time.time() - t_setup
    py = os.path.join(VENV, "bin", "python")
    me = os.path.abspath(__file__)
    rb = os.path.join(ROOT, "build", "bench", "rollout_bench")
    env = dict(os.environ, XLA_FLAGS=os.environ.get("XLA_FLAGS", ""), JAX_PLATFORMS="cpu",
               TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")

    rows = []

    def add(peer, variant, n, t, res, autoreset, note=""):
        row = {"peer": peer, "variant": variant, "envs": n, "threads": t, "autoreset": autoreset}
        if "error" in res:
            row.update(status="skipped", reason=res["error"])
        else:
            row.update(status="ok", version=res.get("version", ""), impl=res.get("impl", ""),
                       steps=res["steps"], median_s=statistics.median(res["runs_s"]),
                       runs_s=" ".join("%.4f" % x for x in res["runs_s"]),
                       env_steps_per_sec=median_rate(n, res["steps"], res["runs_s"]),
                       compile_s=res.get("compile_s", ""), busy=res.get("busy", False))
        row["note"] = note
        rows.append(row)
        print(json.dumps(row), flush=True)

    def measure(n, t, variants, peers):
        # cartsim: the fused rollout, and the step API driven from the host.
        steps = max(100, (1 << 25) // n)
        for variant, extra, autoreset in (("fused rollout", [], "same_step"),
                                           ("step API", ["--step-api"], "next_step")):
            if variant not in variants:
                continue
            s = steps if not extra else max(20, steps // 10)
            r = run_json(pinned(t, [rb, "--env", "cartpole", "--envs", str(n), "--steps", str(s),
                                    "--threads", str(t), "--backend", "cpu", "--repeat", str(a.repeat)] + extra),
                         a.timeout, threads=t)
            if "error" not in r:
                r = {"version": "cartsim (this tree)", "impl": "cpu, fusion full", "steps": s,
                     "runs_s": [x / 1e3 for x in r["runs_ms"]], "compile_s": r["compile_ms"] / 1e3,
                     "busy": r["busy"]}
            add("cartsim", variant, n, t, r, autoreset)
        # cartsim Python twice: with int64 actions (what action_space.sample()
        # and tensor.numpy() give) and with int32 ones (the library's own type).
        for peer, worker, autoreset, variant, extra in (
                ("cartsim Python", "cartsim-python", "next_step", "int64 actions", ["--action-dtype", "int64"]),
                ("cartsim Python", "cartsim-python", "next_step", "int32 actions", ["--action-dtype", "int32"]),
                ("Gymnasium", "gymnasium", "next_step", "", []),
                ("gymnax (XLA)", "gymnax", "same_step", "", []),
                ("EnvPool", "envpool", "next_step", "", [])):
            if worker not in peers or (peer in ("Gymnasium", "cartsim Python") and t > 1):
                continue   # NumPy's elementwise operations run on one thread
            reason = status.get(worker)
            if reason:
                add(peer, variant, n, t, {"error": reason}, autoreset)
                continue
            r = run_json(pinned(t, [py, me, "--worker", worker, "--envs", str(n), "--threads", str(t),
                                    "--repeat", str(a.repeat), "--min-time", str(a.min_time)] + extra),
                         a.timeout, env, threads=t)
            add(peer, variant, n, t, r, autoreset)

    for n in a.envs_list:
        for t in threads_list:
            measure(n, t, ("fused rollout", "step API"), ("cartsim-python", "gymnasium", "gymnax", "envpool"))
    # The Python package's step against the C step API and the step()s of the
    # peers, one thread; at 1 environment these are what one call costs.
    for n in (int(x) for x in a.python_envs.split(",") if x):
        if n not in a.envs_list:
            measure(n, 1, ("step API",), ("cartsim-python", "gymnasium", "envpool"))

    fields = ["peer", "variant", "envs", "threads", "status", "env_steps_per_sec", "median_s", "steps", "runs_s",
              "compile_s", "autoreset", "version", "impl", "busy", "reason", "note"]
    with open(os.path.join(a.out, "peers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow(row)

    # XLA against unroll: the paper's compile-time observation, on the CPU.
    xla = []
    if a.xla_unroll and not status.get("gymnax"):
        r = run_json(pinned(1, [py, me, "--worker", "gymnax-unroll", "--envs", "2048", "--threads", "1",
                                "--unroll", a.xla_unroll, "--repeat", str(a.repeat), "--min-time",
                                str(a.min_time), "--compile-cap", str(a.compile_cap)]), a.timeout * 2, env)
        if "error" in r:
            xla.append({"unroll": "", "status": "skipped", "reason": r["error"]})
        else:
            for p in r["sweep"]:
                xla.append({"unroll": p["unroll"], "status": "ok", "compile_ms": p["compile_s"] * 1e3,
                            "run_ms_per_1000_steps": statistics.median(p["runs_s"]) / (p["steps"] / 1000) * 1e3,
                            "env_steps_per_sec": median_rate(2048, p["steps"], p["runs_s"]),
                            "version": r["version"], "busy": r.get("busy", False)})
    elif a.xla_unroll:
        xla.append({"unroll": "", "status": "skipped", "reason": status.get("gymnax")})
    with open(os.path.join(a.out, "xla_unroll.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["unroll", "status", "compile_ms", "run_ms_per_1000_steps",
                                          "env_steps_per_sec", "version", "busy", "reason"],
                           extrasaction="ignore")
        w.writeheader()
        for row in xla:
            w.writerow(row)
    with open(os.path.join(a.out, "peers_setup.json"), "w") as f:
        json.dump({"venv": os.path.relpath(VENV, ROOT), "setup_s": round(setup_s, 1),
                   "install_s": round(INSTALL_S[0], 1), "pins": PINS,
                   "install": {k: v for k, v in status.items()},
                   "quiet": {k: suite.QUIET[k] for k in ("runs", "waited_s", "busy_starts")}}, f, indent=1)


if __name__ == "__main__":
    main()

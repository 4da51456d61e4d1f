"""The library's trainers (evolution strategies, the cross-entropy method) and policy files."""
import dataclasses
import math

import numpy as np

from ._native import c_text, call_with_error_buffer, ffi, free, lib
from .batch import Batch, dtype_name, open_config, param_text
from .vector_env import library_env


@dataclasses.dataclass
class Policy:
    """A trained policy: the environment's short name, the architecture
    ("linear", "mlp:32x32") and the mean policy's weights."""
    env: str
    policy: str
    weights: np.ndarray

    def save(self, path):
        """Writes a policy file (docs/policy_format.md), as `cartsim train --out` does."""
        save_policy(path, self.env, self.policy, self.weights)


@dataclasses.dataclass
class TrainResult:
    policy: Policy
    solved: bool
    target: float
    eval_return: float
    generations: int
    env_steps: int
    elapsed_ms: float
    compile_ms: float


_TRAIN_FIELDS = ("sigma", "learning_rate", "weight_decay", "elite_fraction", "init_std", "extra_std")


def train(env, *, algo="es", policy="linear", population=256, generations=200, seed=0, target=None,
          eval_episodes=100, progress=None, backend="auto", dtype="float32", threads=None, params=None,
          **search):
    """Trains a policy for `env` with cs_train (the GIL is released while it runs).

    algo "es" or "cem"; policy "linear", "mlp:H" or "mlp:HxH"; target None: the
    environment's reward threshold; progress(dict) is called after every generation;
    search: sigma, learning_rate, weight_decay (ES), elite_fraction, init_std, extra_std (CEM).
    """
    settings = [("env", library_env(env)), ("backend", backend), ("dtype", dtype_name(dtype))]
    if threads is not None:
        settings.append(("threads", threads))
    for name, value in (params or {}).items():
        settings.append(("param", param_text(name, value)))
    cfg, keep = open_config(settings, {})
    tc = ffi.new("cs_train_config *")
    lib.cs_train_config_init(tc)
    if algo not in ("es", "cem"):
        raise ValueError("cartsim: algo must be 'es' or 'cem', not %r" % (algo,))
    tc.algo = lib.CS_ALGO_ES if algo == "es" else lib.CS_ALGO_CEM
    policy_c = ffi.new("char[]", c_text(policy, "policy"))
    tc.policy = policy_c
    tc.population, tc.generations, tc.seed = int(population), int(generations), int(seed)
    tc.target = math.nan if target is None else float(target)
    tc.eval_episodes = int(eval_episodes)
    for name, value in search.items():
        if name not in _TRAIN_FIELDS:
            raise TypeError("cartsim: train() got an unexpected keyword %r" % name)
        setattr(tc, name, float(value))
    if progress is not None:
        @ffi.callback("void(void *, const cs_train_progress *)")
        def report(user, p):
            progress({"generation": p.generation, "mean_return": p.mean_return, "best_return": p.best_return,
                      "eval_return": p.eval_return, "env_steps": p.env_steps,
                      "env_steps_per_sec": p.env_steps_per_sec, "elapsed_ms": p.elapsed_ms})
        tc.progress = report
    out = ffi.new("cs_train_result *")
    call_with_error_buffer(lib.cs_train, cfg, tc, out)
    try:
        weights = np.frombuffer(ffi.buffer(out.weights, 8 * out.n_weights), dtype=np.float64).copy()
    finally:
        free(out.weights)
    return TrainResult(Policy(ffi.string(out.env).decode(), ffi.string(out.policy).decode(), weights),
                       bool(out.solved), out.target, out.eval_return, out.generations, out.env_steps,
                       out.elapsed_ms, out.compile_ms)


def save_policy(path, env, policy, weights):
    w = np.ascontiguousarray(weights, dtype=np.float64)
    call_with_error_buffer(lib.cs_policy_save, c_text(path, "path"), c_text(env, "env"), c_text(policy, "policy"),
                           w.size, ffi.from_buffer("double[]", w))


def load_policy(path):
    """A policy file as a Policy; CartsimError for a missing or damaged file."""
    f = ffi.new("cs_policy_file *")
    call_with_error_buffer(lib.cs_policy_load, c_text(path, "path"), f)
    try:
        weights = np.frombuffer(ffi.buffer(f.weights, 8 * f.n_weights), dtype=np.float64).copy()
        return Policy(ffi.string(f.env).decode(), ffi.string(f.policy).decode(), weights)
    finally:
        lib.cs_policy_file_free(f)


def policy_batch(policy, num_envs, **batch_settings):
    """A Batch of the policy's environment running it in every environment (for rollouts and evaluation)."""
    if isinstance(policy, (str, bytes)):
        policy = load_policy(policy)
    batch = Batch(policy.env, num_envs, policy=policy.policy, **batch_settings)
    batch.set_weights(policy.weights)
    return batch


def evaluate(policy, episodes=100, seed=0, num_envs=None, **batch_settings):
    """Whole returns of `episodes` fresh episodes of a Policy or policy file, as `cartsim eval` gives them."""
    batch = policy_batch(policy, num_envs or min(int(episodes), 1024), **batch_settings)
    try:
        return batch.evaluate(None, episodes, seed)
    finally:
        batch.close()


__all__ = ["Policy", "TrainResult", "train", "save_policy", "load_policy", "evaluate", "policy_batch"]

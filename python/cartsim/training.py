"""The library's trainers (evolution strategies, the cross-entropy method, PPO) and policy files."""
import dataclasses
import math
import os

import numpy as np

from ._native import ERROR_SIZE, CartsimError, c_text, call_with_error_buffer, ffi, free, lib, status_name, text
from .batch import Batch, check_keywords, dtype_name, integer, open_config, param_text
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


def train_settings():
    """The trainers' settings, as the library's table declares them (cs_train_setting_at):
    a list of dicts with name, kind ("int", "real", "bool", "choice"), default, note and help.
    Each is a keyword of train()."""
    kinds = {lib.CS_SETTING_INT: "int", lib.CS_SETTING_REAL: "real", lib.CS_SETTING_BOOL: "bool",
             lib.CS_SETTING_CHOICE: "choice"}
    out = []
    info = ffi.new("cs_setting_info *")
    for i in range(lib.cs_train_setting_count()):
        lib.cs_train_setting_at(i, info)
        out.append({"name": text(info.name), "kind": kinds.get(info.kind, "?"), "default": text(info.default_value),
                    "note": text(info.default_note), "help": text(info.help)})
    return out


def _setting_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _progress_dict(p):
    return {"generation": p.generation, "mean_return": p.mean_return, "best_return": p.best_return,
            "eval_return": p.eval_return, "env_steps": p.env_steps, "env_steps_per_sec": p.env_steps_per_sec,
            "elapsed_ms": p.elapsed_ms, "policy_loss": p.policy_loss, "value_loss": p.value_loss,
            "entropy": p.entropy, "approx_kl": p.approx_kl, "learning_rate": p.learning_rate}


def train(env, *, algo="es", policy=None, population=256, generations=200, seed=0, target=None,
          eval_episodes=100, progress=None, backend="auto", dtype="float32", threads=None, params=None,
          **settings):
    """Trains a policy for `env` with cs_train (the GIL is released while it runs).

    algo "es", "cem" or "ppo"; policy "linear", "mlp:H" or "mlp:HxH" (None: linear for es
    and cem, mlp:64 for ppo); population and generations are es's and cem's; target None:
    the environment's reward threshold; progress(dict) is called after every generation or
    iteration. settings: the algorithms' own, by name (train_settings() lists them): es's
    sigma, learning_rate, weight_decay; cem's elite_fraction, init_std, extra_std; ppo's
    CleanRL names (num_envs, num_steps, total_timesteps, learning_rate, gamma, gae_lambda,
    num_minibatches, update_epochs, clip_coef, ent_coef, vf_coef, max_grad_norm, ...).
    Returns a TrainResult; its Policy is a dense policy (for ppo, the actor). A PPO loss
    that goes NaN raises CartsimError (status "CS_ERR_NUMERIC") whose .policy is the last
    finite one.
    """
    if algo not in ("es", "cem", "ppo"):
        raise ValueError("cartsim: algo must be 'es', 'cem' or 'ppo', not %r" % (algo,))
    if policy is None:
        policy = "mlp:64" if algo == "ppo" else "linear"
    setup = [("env", library_env(env)), ("backend", backend), ("dtype", dtype_name(dtype))]
    if threads is not None:
        setup.append(("threads", threads))
    for name, value in (params or {}).items():
        setup.append(("param", param_text(name, value)))
    cfg, keep = open_config(setup, {})
    tc = ffi.new("cs_train_config *")
    lib.cs_train_config_init(tc)
    tc.algo = {"es": lib.CS_ALGO_ES, "cem": lib.CS_ALGO_CEM, "ppo": lib.CS_ALGO_PPO}[algo]
    policy_c = ffi.new("char[]", c_text(policy, "policy"))
    tc.policy = policy_c
    tc.population, tc.generations = integer("population", population), integer("generations", generations)
    tc.seed = integer("seed", seed)
    tc.target = math.nan if target is None else float(target)
    tc.eval_episodes = integer("eval_episodes", eval_episodes)
    err = ffi.new("char[]", ERROR_SIZE)
    for name, value in settings.items():
        code = lib.cs_train_config_set(tc, name.encode(), c_text(_setting_text(value), name), err, ERROR_SIZE)
        if code == lib.CS_ERR_NOT_FOUND:
            check_keywords("cartsim.train", [name], tuple(s["name"] for s in train_settings()) + (
                "algo", "policy", "population", "generations", "seed", "target", "eval_episodes", "progress",
                "backend", "dtype", "threads", "params"))
        if code != lib.CS_OK:
            raise ValueError("cartsim: %s: %s" % (name, text(err)))
    if progress is not None:
        @ffi.callback("void(void *, const cs_train_progress *)")
        def report(user, p):
            progress(_progress_dict(p))
        tc.progress = report
    out = ffi.new("cs_train_result *")
    code = lib.cs_train(cfg, tc, out, err, ERROR_SIZE)
    weights = None
    if out.weights != ffi.NULL:
        try:
            weights = np.frombuffer(ffi.buffer(out.weights, 8 * out.n_weights), dtype=np.float64).copy()
        finally:
            free(out.weights)
    trained = Policy(ffi.string(out.env).decode(), ffi.string(out.policy).decode(), weights) \
        if weights is not None else None
    if code != lib.CS_OK:
        error = CartsimError(text(err) or text(lib.cs_status_string(code)), status_name(code))
        error.policy = trained
        raise error
    return TrainResult(trained, bool(out.solved), out.target, out.eval_return, out.generations, out.env_steps,
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


# What opening a policy's batch takes (the policy itself comes with it).
_OPENING_KEYWORDS = tuple(k for k in Batch.KEYWORDS if k != "policy")


def policy_batch(policy, num_envs, env=None, **batch_settings):
    """A Batch of the policy's environment running it in every environment (for
    rollouts and evaluation). env: where that environment is, when it is not a
    name cartsim knows (a .env file's path); it must be the policy's."""
    check_keywords("cartsim.policy_batch", batch_settings, ("env",) + _OPENING_KEYWORDS)
    policy = _as_policy(policy)
    batch = Batch(policy.env if env is None else library_env(env), integer("num_envs", num_envs),
                  policy=policy.policy, **batch_settings)
    if batch.name != policy.env:
        batch.close()
        raise ValueError("cartsim: the policy is for %s, not %s" % (policy.env, batch.name))
    batch.set_weights(policy.weights)
    return batch


def _as_policy(policy):
    """A Policy from a Policy or a policy file's path; TypeError for anything else."""
    if isinstance(policy, (str, bytes, os.PathLike)):
        return load_policy(policy)
    if not isinstance(policy, Policy):
        raise TypeError("cartsim: policy must be a cartsim.Policy or a policy file's path, not %r" % (policy,))
    return policy


def evaluate(policy, episodes=100, seed=0, num_envs=None, *, env=None, **batch_settings):
    """Whole returns of `episodes` fresh episodes of a Policy or policy file, as
    `cartsim eval` gives them. The policy names its environment; env= (a name,
    Gymnasium id or .env path) may say where that environment is, and must be it."""
    check_keywords("cartsim.evaluate", batch_settings, ("episodes", "seed", "num_envs", "env") + _OPENING_KEYWORDS)
    if isinstance(episodes, str):
        raise TypeError("cartsim: evaluate(policy, episodes=100, seed=0, ...): episodes must be an integer, not %r "
                        "(the policy names its environment; env=%r if it must be found elsewhere)"
                        % (episodes, episodes))
    episodes, seed = integer("episodes", episodes), integer("seed", seed)
    batch = policy_batch(policy, min(episodes, 1024) if num_envs is None else num_envs, env, **batch_settings)
    try:
        return batch.evaluate(None, episodes, seed)
    finally:
        batch.close()


__all__ = ["Policy", "TrainResult", "train", "train_settings", "save_policy", "load_policy", "evaluate", "policy_batch"]

"""One cs_env handle: a batch of environments of one kind, stepped together.

Arrays handed out view the library's buffers (no copies). A view shows what
the buffer holds now: the next step, reset or rollout on the same batch
overwrites it, so keep a copy (np.array(view)) of what must outlive that.
A view also keeps the handle's memory alive: close() stops the batch at
once, and the memory goes when the last view of it goes.

Threads: the library releases the GIL in every call and a handle takes one
call at a time (cartsim.h), so each batch has a lock that its calls take:
two threads using one batch take turns (a step, a rollout, close), never
crash. Taking the lock costs about 0.4 microseconds a call here, little next
to a step (about 10 microseconds for 64 CartPoles, 70 for 4096).
Reading a view while another thread steps shows whichever step it shows.
"""
import inspect
import operator
import threading

import numpy as np

from ._native import CartsimError, c_text, call_with_error_buffer, check, ffi, lib, text
from . import structure
from .dlpack import CUDA, DeviceArray

_INT32_MAX = 2**31 - 1

BACKENDS = ("auto", "cpu", "cuda", "interp")
FUSIONS = ("full", "rules", "none")
AUTORESETS = {"next_step": "next_step", "same_step": "same_step"}


def dtype_name(dtype):
    """"f32" or "f64" from "float32", "f64", np.float64 ..."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) or dtype not in ("f32", "f64") else dtype
    names = {"float32": "f32", "f32": "f32", "float64": "f64", "f64": "f64"}
    if name not in names:
        raise ValueError("cartsim: dtype must be float32 or float64, not %r" % (dtype,))
    return names[name]


def integer(name, value):
    """value as an int; TypeError for what is not one (4.5, "4", True), as NumPy
    refuses them for sizes, rather than truncating it silently."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("cartsim: %s must be an integer, not %r" % (name, value))
    return int(value)


def keyword_error(caller, name, accepted, params=None, env=None):
    """Python's own TypeError text for a function's unknown keyword, naming `caller`,
    the keyword nearest to it and the keywords it takes (and env's params, when the
    function takes them too)."""
    import difflib
    near = difflib.get_close_matches(name, list(accepted) + list(params or ()), 1)
    text = "%s() got an unexpected keyword argument %r%s; its keywords: %s" % (
        caller, name, " (did you mean %r?)" % near[0] if near else "", ", ".join(sorted(accepted)))
    if params is not None:
        text += "; %s's params: %s" % (env, ", ".join(params) if params else "none")
    return text


def check_keywords(caller, given, accepted):
    """TypeError for the first keyword of `given` that is not `accepted` (keyword_error)."""
    for name in given:
        if name not in accepted:
            raise TypeError(keyword_error(caller, name, accepted))


# Python's names of the library's settings where they differ (errors name
# what the caller wrote).
_KEYWORD_OF_SETTING = {"envs": "num_envs", "param": "params", "autoreset": "autoreset_mode"}


def param_text(name, value):
    """"NAME=VALUE" or "NAME=LO:HI" (a (lo, hi) pair is drawn per environment at each reset)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError("cartsim: param %s: a range is a (lo, hi) pair, not %r" % (name, value))
        return "%s=%r:%r" % (name, float(value[0]), float(value[1]))
    return "%s=%r" % (name, float(value))


class _Handle:
    """Owns a cs_env*: cs_env_close runs when this object is collected, which
    is when neither the batch nor any view of its buffers refers to it."""

    def __init__(self, raw, keep):
        self.ptr = ffi.gc(raw, lib.cs_env_close)
        self.keep = keep            # strings cs_config points to, alive as long as the handle

    def message(self):
        return text(lib.cs_env_error(self.ptr))


class _View:
    """A NumPy array interface over library memory; np.asarray(view) is the array, its base this object."""

    def __init__(self, owner, address, shape, strides, typestr):
        self.owner = owner
        self.__array_interface__ = {"data": (address, False), "shape": shape, "strides": strides,
                                    "typestr": typestr, "version": 3}


class _One:
    """step_one's buffers: the action, the observation, the reward and the two flags."""

    def __init__(self, batch):
        self.obs_array = np.empty(batch.obs_dim, dtype=np.float32)
        self.obs = ffi.from_buffer("float[]", self.obs_array)
        if batch.discrete:
            self.action = ffi.new("int32_t[1]")
        else:
            self.action_array = np.empty(batch.action_dim, dtype=np.float32)
            self.action = ffi.from_buffer("float[]", self.action_array)
        self.reward = ffi.new("double[1]")
        self.flags = ffi.new("uint8_t[2]")
        self.truncated = self.flags + 1      # made once: pointer arithmetic costs a cdata a call
        self.call = lib.cs_env_step_one      # looked up once: a lib attribute costs a lookup a call


def _address(pointer):
    return int(ffi.cast("uintptr_t", pointer))


def open_config(settings, fields):
    """A cs_config from settings checked by cs_config_set (the CLI's own checks)
    and raw fields (policy, env_dir, cache_dir, no_cache); returns (cfg, keep)."""
    cfg = ffi.new("cs_config *")
    lib.cs_config_init(cfg)
    keep = []
    for name, value in settings:
        value_c = ffi.new("char[]", c_text(value, name))
        keep.append(value_c)          # cfg keeps the pointer for "env" and "param"
        try:
            call_with_error_buffer(lib.cs_config_set, cfg, name.encode(), value_c)
        except CartsimError as e:
            if e.status != "CS_ERR_ARGUMENT":
                raise
            raise ValueError("cartsim: %s: %s" % (_KEYWORD_OF_SETTING.get(name, name), e)) from None
    for name, value in fields.items():
        if value is None:
            continue
        if isinstance(value, (bool, int)):
            setattr(cfg, name, value)
        else:
            value_c = ffi.new("char[]", c_text(value, name))
            keep.append(value_c)
            setattr(cfg, name, value_c)
    return cfg, keep


class Batch:
    """num_envs environments of one kind (a name such as "cartpole" or a path
    to a .env file) behind one cs_env handle. first_env makes it the slice
    [first_env, first_env + num_envs) of a bigger batch split over workers."""

    def __init__(self, env, num_envs=1, *, backend="auto", dtype="float32", threads=None, params=None,
                 autoreset="next_step", unroll=None, fusion=None, policy=None, strict=False,
                 persistent=None, block=None, env_dir=None, cache_dir=None, no_cache=False, first_env=None):
        if backend not in BACKENDS:
            raise ValueError("cartsim: backend must be one of %s, not %r" % (", ".join(BACKENDS), backend))
        # What siblings (with_policy) are opened with: all of this but the policy.
        self._opening = (env, num_envs, dict(backend=backend, dtype=dtype, threads=threads, params=params,
                                             autoreset=autoreset, unroll=unroll, fusion=fusion, strict=strict,
                                             persistent=persistent, block=block, env_dir=env_dir,
                                             cache_dir=cache_dir, no_cache=no_cache, first_env=first_env))
        self.policy = policy or "random"
        self._siblings = {}
        settings = [("env", env), ("envs", integer("num_envs", num_envs)), ("backend", backend),
                    ("dtype", dtype_name(dtype))]
        if autoreset != "disabled":
            settings.append(("autoreset", autoreset))
        for name, value in (("threads", threads), ("unroll", unroll), ("block", block)):
            if value is not None:
                settings.append((name, integer(name, value)))
        if fusion is not None:
            settings.append(("fusion", fusion))
        if persistent is not None:
            settings.append(("persistent", "true" if persistent else "false"))
        settings.append(("strict", "true" if strict else "false"))
        for name, value in (params or {}).items():
            settings.append(("param", param_text(name, value)))
        cfg, keep = open_config(settings, {"policy": policy, "env_dir": env_dir, "cache_dir": cache_dir,
                                           "no_cache": bool(no_cache),
                                           "first_env": None if first_env is None else integer("first_env", first_env)})
        if autoreset == "disabled":
            cfg.autoreset = lib.CS_AUTORESET_DISABLED
        out = ffi.new("cs_env **")
        code = lib.cs_env_open(cfg, out)
        if out[0] == ffi.NULL:
            raise MemoryError("cartsim: out of memory opening %r" % (env,))
        self._handle = _Handle(out[0], keep)
        self._lock = threading.Lock()       # one library call on this handle at a time
        check(code, self._handle.message)
        self.config = cfg
        info = ffi.new("cs_env_info *")
        self._call(lib.cs_env_get_info(self._handle.ptr, info))
        self.name = text(info.name)
        self.title = text(info.title)
        self.num_envs = int(info.num_envs)
        self.state_dim, self.obs_dim = int(info.state_dim), int(info.obs_dim)
        self.discrete = bool(info.discrete)
        self.n_actions, self.action_dim = int(info.n_actions), int(info.action_dim)
        self.action_low = np.array([info.action_low[k] for k in range(self.action_dim)])
        self.action_high = np.array([info.action_high[k] for k in range(self.action_dim)])
        self.max_steps = int(info.max_steps)
        self.reward_threshold = float(info.reward_threshold)
        self.state_names = [text(info.state_names[k]) for k in range(self.state_dim)]
        # the .env file's own structure: variables and observation items by name
        self.state_vars, self.obs_items = structure.describe(self._handle.ptr, info)
        self.obs_int_dim = int(info.obs_int_dim)
        self.n_step_draws, self.n_restart_draws = int(info.n_step_draws), int(info.n_restart_draws)
        self.info_items = structure.describe_info(self._handle.ptr, info)
        self.flat_obs = structure.is_flat(self.obs_items)
        self.backend = text(lib.cs_backend_name(info.backend))
        self.fusion = text(lib.cs_fusion_name(info.fusion))
        self.dtype = np.float32 if info.dtype == lib.CS_DTYPE_F32 else np.float64
        self.unroll, self.threads = int(info.unroll), int(info.threads)
        self.compile_ms, self.cache_hit = float(info.compile_ms), bool(info.cache_hit)
        self.notice = text(info.notice)
        self.device = text(info.device)
        self.num_weights = int(lib.cs_env_num_weights(self._handle.ptr))
        self._views = {}
        self._one = None

    # -------------------------------------------------------------- plumbing

    @property
    def closed(self):
        return self._handle is None

    def _ptr(self):
        if self._handle is None:
            raise CartsimError("cartsim: the environment is closed", "CS_ERR_STATE")
        return self._handle.ptr

    def _call(self, code):
        check(code, self._handle.message)

    def _view(self, key, pointer, shape, strides, typestr):
        """The array over `pointer`, made again only when the library's address changed."""
        cached = self._views.get(key)
        if cached is not None and cached[0] == pointer:      # cdata pointers compare by address
            return cached[1]
        if pointer == ffi.NULL:
            self._call(lib.CS_ERR_STATE)
        array = np.asarray(_View(self._handle, _address(pointer), shape, strides, typestr))
        self._views[key] = (pointer, array)
        return array

    def close(self):
        """Stops the batch and its siblings; harmless twice. The memory goes with the last view of it.
        A call running in another thread finishes first; later calls raise CartsimError."""
        with self._lock:
            siblings, self._siblings = self._siblings, {}
            self._handle = None
            self._views = {}
        for sibling in siblings.values():
            sibling.close()

    # -------------------------------------------------------------- stepping

    def reset(self, seed):
        """Every environment starts a fresh episode drawn from `seed` (an int >= 0)."""
        seed = int(seed)
        with self._lock:
            self._call(lib.cs_env_reset(self._ptr(), seed))

    @property
    def actions_shape(self):
        """What step() takes, Gymnasium's vector action_space.shape: (num_envs,) of
        integers for a discrete space, (num_envs, action_dim) of reals for a box,
        one row per environment, whatever action_dim is (1 included)."""
        return (self.num_envs,) if self.discrete else (self.num_envs, self.action_dim)

    def _actions(self, actions):
        """(the step function, its C type, the buffer): int32 actions go to the library
        as they are, int64 ones (NumPy's and PyTorch's default) too, converted
        in the library's vectorized check; box actions as float32[action_dim][num_envs]."""
        a = np.asarray(actions)
        if a.shape != self.actions_shape:
            kind = "discrete actions" if self.discrete else "a box of %d" % self.action_dim
            raise ValueError("cartsim: actions must have shape %s, the action space's (one row per environment, "
                             "%s), not %s" % (self.actions_shape, kind, a.shape))
        if self.discrete:
            if a.dtype.kind not in "iub":
                raise TypeError("cartsim: discrete actions must be integers, not %s" % a.dtype)
            if a.dtype == np.int32:
                return lib.cs_env_step_discrete, "int32_t[]", np.ascontiguousarray(a)
            if a.dtype == np.uint64 and a.size and a.max() > np.iinfo(np.int64).max:
                i = int(np.flatnonzero(a > np.iinfo(np.int64).max)[0])   # would wrap to a negative int64
                raise CartsimError("action %d of environment %d is not in [0, %d)" % (a[i], i, self.n_actions),
                                   "CS_ERR_ARGUMENT")
            return lib.cs_env_step_discrete_i64, "int64_t[]", np.ascontiguousarray(a, dtype=np.int64)
        if a.dtype.kind not in "biuf":
            raise TypeError("cartsim: box actions must be real numbers, not %s" % a.dtype)
        return lib.cs_env_step_box, "float[]", np.ascontiguousarray(a.T, dtype=np.float32)

    def step(self, actions):
        step, ctype, buffer = self._actions(actions)
        buffer = ffi.from_buffer(ctype, buffer)
        with self._lock:
            code = step(self._ptr(), buffer)
            if code != lib.CS_OK:
                self._call(code)

    def step_one(self, action):
        """A batch of one environment: steps with `action` (an int, or action_dim floats)
        and returns (observation copy, reward, terminated, truncated) from one library
        call (cs_env_step_one) into buffers made once: for one environment, each call into
        the library, each array made and each check costs more than the step itself."""
        one = self._one
        if one is None:
            if self.num_envs != 1:
                raise ValueError("cartsim: step_one steps a batch of one environment, not %d" % self.num_envs)
            if not self.flat_obs:
                raise ValueError("cartsim: step_one returns a row of real observations; %s's are not (step() and "
                                 "observation() give them)" % self.name)
            one = self._one = _One(self)
        if self.discrete:
            try:
                a = operator.index(action)
            except TypeError:
                a = None
            if a is None or not -2**31 <= a < 2**31:
                # an array, a float, or past int32: step() steps it, or its checks say what is wrong
                self.step(np.asarray(action).reshape(self.actions_shape))
                return (self.obs()[0].copy(), float(self.rewards()[0]), bool(self.terminated()[0]),
                        bool(self.truncated()[0]))
            one.action[0] = a
        else:
            a = np.asarray(action, dtype=np.float32)
            if a.size != self.action_dim:
                raise ValueError("cartsim: the action must have %d components, not %d" % (self.action_dim, a.size))
            one.action_array[:] = a.reshape(self.action_dim)
        with self._lock:
            code = one.call(self._ptr(), one.action, one.obs, one.reward, one.flags, one.truncated)
            if code:   # CS_OK is 0
                self._call(code)
            flags = one.flags
            return one.obs_array.copy(), one.reward[0], flags[0] != 0, flags[1] != 0

    def results(self):
        """(obs, rewards, terminated, truncated) after a step, as obs() ... truncated()
        give them, in one call: at small batches Python's overhead is most of a step."""
        with self._lock:
            ptr = self._ptr()
            return self._obs(ptr, "obs", lib.cs_env_obs), self._rewards(ptr), *self._flags(ptr)

    def obs(self):
        """(num_envs, obs_dim) float32, a strided view of the library's [obs_dim][num_envs] buffer."""
        with self._lock:
            return self._obs(self._ptr(), "obs", lib.cs_env_obs)

    def final_obs(self):
        """Same-step mode: the observations that ended the last episodes (rows of the environments that ended)."""
        with self._lock:
            return self._obs(self._ptr(), "final_obs", lib.cs_env_final_obs)

    def rewards(self):
        with self._lock:
            return self._rewards(self._ptr())

    def terminated(self):
        with self._lock:
            return self._flags(self._ptr())[0]

    def truncated(self):
        with self._lock:
            return self._flags(self._ptr())[1]

    def observation(self, final=False):
        """The observation as the .env file declares it: the (num_envs, obs_dim) float
        view when every item is a real scalar (obs()), else each item's view shaped
        (num_envs, *shape) (float32 for a box, int64 for a discrete item), one item
        alone or a tuple of them. Views, not copies."""
        with self._lock:
            return self._observation(final)

    def _observation(self, final):
        ptr = self._ptr()
        if self.flat_obs:
            return self._obs(ptr, "final_obs" if final else "obs", lib.cs_env_final_obs if final else lib.cs_env_obs)
        views = []
        for k, it in enumerate(self.obs_items):
            if it.discrete:
                pointer = (lib.cs_env_final_obs_int if final else lib.cs_env_obs_int)(ptr)
                typestr = "<i8"
            else:
                pointer = (lib.cs_env_final_obs if final else lib.cs_env_obs)(ptr)
                typestr = "<f4"
            if pointer == ffi.NULL:
                self._call(lib.CS_ERR_STATE)
            offset, shape, strides = structure.item_layout(it, self.num_envs)
            key = ("final_item" if final else "item", k)
            cached = self._views.get(key)
            if cached is not None and cached[0] == pointer:
                views.append(cached[1])
                continue
            array = np.asarray(_View(self._handle, _address(pointer) + offset, shape, strides, typestr))
            self._views[key] = (pointer, array)
            views.append(array)
        return views[0] if len(views) == 1 else tuple(views)

    def replay_draws(self, step_words=None, restart_words=None):
        """The next step or reset takes its random words from these uint32 arrays,
        shaped (n_step_draws, num_envs) and (n_restart_draws, num_envs), instead of
        Philox (cs_env_replay_draws: how tests replay a reference's random outcomes).
        None: Philox as usual. Kept alive here until that call has run."""
        def words(a, count, what):
            if a is None:
                return None
            a = np.ascontiguousarray(a, dtype=np.uint32)
            if a.shape != (max(count, 1), self.num_envs) and a.shape != (count, self.num_envs):
                raise ValueError("cartsim: %s must have shape (%d, %d), not %s" % (what, count, self.num_envs,
                                                                                 a.shape))
            return a
        s = words(step_words, self.n_step_draws, "step_words")
        r = words(restart_words, self.n_restart_draws, "restart_words")
        with self._lock:
            self._replay_keep = (s, r)
            self._call(lib.cs_env_replay_draws(self._ptr(), ffi.NULL if s is None else ffi.from_buffer("uint32_t[]", s),
                                               ffi.NULL if r is None else ffi.from_buffer("uint32_t[]", r)))

    def info(self, final=False):
        """The .env file's info values of the last step or reset, {name: (num_envs, *shape)}
        in each one's type (copies: an info dict outlives the step), {} when it declares none."""
        if not self.info_items:
            return {}
        n = self.num_envs
        with self._lock:
            values = (lib.cs_env_final_info_values if final else lib.cs_env_info_values)(self._ptr())
            if values == ffi.NULL:
                self._call(lib.CS_ERR_STATE)
            flat = np.frombuffer(ffi.buffer(values, 8 * n * sum(it.size for it in self.info_items)), dtype=np.float64)
            return structure.info_dict(flat.reshape(-1, n), self.info_items)

    def _obs(self, ptr, key, query):
        n = self.num_envs
        return self._view(key, query(ptr), (n, self.obs_dim), (4, 4 * n), "<f4")

    def _rewards(self, ptr):
        return self._view("rewards", lib.cs_env_rewards(ptr), (self.num_envs,), None, "<f8")

    def _flags(self, ptr):
        n = self.num_envs
        return (self._view("terminated", lib.cs_env_terminated(ptr), (n,), None, "|b1"),
                self._view("truncated", lib.cs_env_truncated(ptr), (n,), None, "|b1"))

    def get_state(self):
        """Every state variable by name, {name: (num_envs, *shape)} in its own dtype, as a
        structure.State, which is also the raw (num_envs, state_dim) array of doubles it
        always was (np.asarray(state), state[:, k]). A copy."""
        out = np.empty((self.state_dim, self.num_envs), dtype=np.float64)
        with self._lock:
            self._call(lib.cs_env_get_state(self._ptr(), ffi.from_buffer("double[]", out)))
        return structure.State(out.T, self.state_vars, self.dtype)

    def set_state(self, state, episode_steps=None):
        """Sets every environment's state ((num_envs, state_dim) doubles) and the
        steps its running episode has taken (default 0)."""
        flat = structure.flat_state(state, self.state_vars, self.num_envs, self.state_dim)
        s = np.ascontiguousarray(flat.T)
        steps = ffi.NULL
        if episode_steps is not None:
            given = np.asarray(episode_steps)
            if given.dtype.kind not in "iu" or (given.size and (given.min() < 0 or given.max() > _INT32_MAX)):
                raise ValueError("cartsim: episode_steps must be integers from 0 to %d, not %s"
                                 % (_INT32_MAX, given.dtype if given.dtype.kind not in "iu" else
                                    "%d" % (given.max() if given.max() > _INT32_MAX else given.min())))
            steps_array = np.ascontiguousarray(given, dtype=np.int32).reshape(self.num_envs)
            steps = ffi.from_buffer("int32_t[]", steps_array)
        with self._lock:
            self._call(lib.cs_env_set_state(self._ptr(), ffi.from_buffer("double[]", s), steps))

    # -------------------------------------------------------------- rollouts and policies

    def rollout(self, steps):
        """`steps` fused steps of every environment with the batch's policy; the statistics as a dict."""
        stats = ffi.new("cs_rollout_stats *")
        steps = int(steps)
        n = self.num_envs
        with self._lock:
            self._call(lib.cs_env_rollout(self._ptr(), steps, stats))
            episode_returns = np.frombuffer(ffi.buffer(lib.cs_env_episode_returns(self._ptr()), 8 * n),
                                            dtype=np.float64).copy()
            episode_counts = np.frombuffer(ffi.buffer(lib.cs_env_episode_counts(self._ptr()), 8 * n),
                                           dtype=np.int64).copy()
        return {
            "steps": stats.steps, "env_steps": stats.env_steps, "episodes": stats.episodes,
            "mean_return": stats.mean_return, "nonfinite": stats.nonfinite, "launches": stats.launches,
            "run_ms": stats.run_ms, "checksum": stats.checksum,
            "env_steps_per_sec": stats.env_steps / (stats.run_ms / 1e3) if stats.run_ms > 0 else float("nan"),
            "episode_returns": episode_returns, "episode_counts": episode_counts,
        }

    def with_policy(self, policy):
        """This batch's sibling that rolls out `policy` (a name cs_config.policy takes:
        "random", "heuristic", "linear", "mlp:32"...): opened with the same settings on
        first use and kept until this batch closes (each policy is its own compiled
        kernel). This batch itself for its own policy."""
        if policy == self.policy:
            return self
        self._ptr()
        sibling = self._siblings.get(policy)
        if sibling is None:
            env, num_envs, settings = self._opening
            sibling = Batch(env, num_envs, policy=policy, **settings)
            self._siblings[policy] = sibling
        return sibling

    def copy_state_from(self, other):
        """Makes this batch continue exactly where `other` (a batch of the same environment,
        size and dtype) is: state, parameters, episode steps, flags, seed and step count."""
        if other is self:
            with self._lock:
                self._call(lib.cs_env_copy_state(self._ptr(), self._ptr()))
            return
        first, second = (self, other) if id(self) < id(other) else (other, self)   # one order: no deadlock
        with first._lock, second._lock:
            self._call(lib.cs_env_copy_state(self._ptr(), other._ptr()))

    def set_weights(self, weights):
        """weights: (num_weights,) for every environment, or (num_envs, num_weights), one policy each."""
        w = np.asarray(weights, dtype=np.float64)
        if w.shape == (self.num_weights,):
            w = np.broadcast_to(w, (self.num_envs, self.num_weights))
        if w.shape != (self.num_envs, self.num_weights):
            raise ValueError("cartsim: weights must have shape (%d,) or (%d, %d), not %s"
                             % (self.num_weights, self.num_envs, self.num_weights, w.shape))
        per_weight = np.ascontiguousarray(w.T)
        with self._lock:
            self._call(lib.cs_env_set_weights(self._ptr(), ffi.from_buffer("double[]", per_weight)))

    def get_weights(self):
        out = np.empty((self.num_weights, self.num_envs), dtype=np.float64)
        with self._lock:
            self._call(lib.cs_env_get_weights(self._ptr(), ffi.from_buffer("double[]", out)))
        return out.T.copy()

    def evaluate(self, weights=None, episodes=100, seed=0):
        """The whole return of each of `episodes` fresh episodes of the batch's
        policy with `weights` (NULL: the weights each environment has)."""
        returns = np.empty(int(episodes), dtype=np.float64)
        w = ffi.NULL
        if weights is not None:
            w_array = np.ascontiguousarray(weights, dtype=np.float64).reshape(self.num_weights)
            w = ffi.from_buffer("double[]", w_array)
        with self._lock:
            self._call(lib.cs_evaluate(self._ptr(), w, int(episodes), int(seed), ffi.from_buffer("double[]", returns)))
        return returns

    # -------------------------------------------------------------- CUDA

    def device_arrays(self):
        """The cuda backend's buffers where they live, as DLPack / __cuda_array_interface__
        arrays shaped as the host views (torch.from_dlpack takes them without copies);
        CartsimError (CS_ERR_UNAVAILABLE) on the other backends. "actions" is the one to
        write, then step_device()."""
        d = ffi.new("cs_device_buffers *")
        with self._lock:
            self._call(lib.cs_env_device_buffers(self._ptr(), d))
        n, dev = self.num_envs, int(d.device)
        real = self.dtype

        def array(address, shape, strides, dtype):
            return DeviceArray(self._handle, address, shape, strides, dtype, CUDA, dev)

        arrays = {
            "obs": array(d.obs, (n, self.obs_dim), (1, n), np.float32),
            "final_obs": array(d.final_obs, (n, self.obs_dim), (1, n), np.float32),
            "rewards": array(d.rewards, (n,), (1,), np.float64),
            "terminated": array(d.terminated, (n,), (1,), np.bool_),
            "truncated": array(d.truncated, (n,), (1,), np.bool_),
            "state": array(d.state, (n, self.state_dim), (1, n), real),
            "episode_steps": array(d.episode_steps, (n,), (1,), np.int32),
        }
        arrays["actions"] = (array(d.actions, (n,), (1,), np.int32) if self.discrete
                             else array(d.actions, (n, self.action_dim), (1, n), np.float32))
        return arrays

    def step_device(self):
        """A step with the actions written at device_buffers()["actions"]."""
        with self._lock:
            self._call(lib.cs_env_step_device(self._ptr()))


# The keywords Batch takes besides env and num_envs (VectorEnv and make_vec pass them on).
Batch.KEYWORDS = tuple(name for name, p in inspect.signature(Batch.__init__).parameters.items()
                       if p.kind is p.KEYWORD_ONLY)

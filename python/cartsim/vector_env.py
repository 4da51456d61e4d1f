"""cartsim as a gymnasium.vector.VectorEnv (and a one-environment gymnasium.Env)."""
import os
import re
import sys

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import structure
from ._native import ffi, lib, text
from .batch import Batch, keyword_error
from .frames import CartsimError, Renderer

# The classic-control environments whose Gymnasium counterparts declare the
# observation bounds cartsim reports (their names in envs/).
GYMNASIUM_IDS = {
    "CartPole-v1": "cartpole",
    "Pendulum-v1": "pendulum",
    "MountainCar-v0": "mountain_car",
    "MountainCarContinuous-v0": "mountain_car_continuous",
    "Acrobot-v1": "acrobot",
}



def _builtin_ids():
    """{id: name} of every environment compiled into the library that an id names
    (its title: "FrozenLake-v1" -> "frozen_lake"), as cs_builtin_env_at lists them."""
    ids, title = {}, ffi.new("char[]", 64)
    i = 0
    while True:
        name = lib.cs_builtin_env_at(i, title, 64)
        if name == ffi.NULL:
            return ids
        if title[0] != b"\0":
            ids[text(title)] = text(name)
        i += 1


# Every built-in environment's id: each is registered as cartsim/<id>.
ENV_IDS = _builtin_ids()

_AUTORESET_NAMES = {AutoresetMode.NEXT_STEP: "next_step", AutoresetMode.SAME_STEP: "same_step"}


def library_env(env):
    """The library's name for a Gymnasium id ("CartPole-v1" -> "cartpole"); names and .env paths pass through."""
    return GYMNASIUM_IDS.get(env, env)


def _gymnasium_reference(batch):
    """Gymnasium's own environment with the batch's title when it is one of its
    ids with the same shapes (it declares the observation bounds and metadata,
    which cartsim.h does not); else None."""
    if batch.title not in gymnasium.registry or GYMNASIUM_IDS.get(batch.title) is None:
        return None
    reference = gymnasium.make(batch.title).unwrapped
    same = (reference.observation_space.shape == (batch.obs_dim,)
            and isinstance(reference.action_space, gymnasium.spaces.Discrete) == batch.discrete)
    reference.close()
    return reference if same else None


def _picture_fps(batch):
    """The frame rate the environment's draw block declares, or None when it has none."""
    try:
        return Renderer(batch).fps
    except CartsimError:
        return None


def single_spaces(batch):
    """(observation space, action space, metadata) of one environment of the batch."""
    reference = _gymnasium_reference(batch)
    if reference is not None:
        observation_space = reference.observation_space
        fps = reference.metadata.get("render_fps", 30)
    else:
        observation_space = structure.observation_space(batch.obs_items, batch.obs_dim)
        fps = 30
    metadata = {"render_modes": ["rgb_array"], "render_fps": _picture_fps(batch) or fps}
    if batch.discrete:
        action_space = gymnasium.spaces.Discrete(batch.n_actions)
    else:
        action_space = gymnasium.spaces.Box(batch.action_low.astype(np.float32), batch.action_high.astype(np.float32),
                                            (batch.action_dim,), np.float32)
    return observation_space, action_space, metadata


def _one(observation, i):
    """Environment i's observation, a copy: a row, an item's element, or a tuple of them."""
    if isinstance(observation, tuple):
        return tuple(item[i].copy() for item in observation)
    return observation[i].copy()


def _vector_info(values, mask=None):
    """A vector env's info dict from {name: (num_envs, ...)}: each value with its "_name"
    mask of the environments that have it (all, or `mask`), as Gymnasium's vector envs give it."""
    info = {}
    for name, value in values.items():
        info[name] = value
        info["_" + name] = np.ones(value.shape[0], dtype=bool) if mask is None else mask.copy()
    return info


def _single_info(values):
    """One environment's info: each value's element 0 (a Python float or int for a scalar)."""
    return {name: (value[0].item() if value.ndim == 1 else value[0].copy()) for name, value in values.items()}


def _autoreset_mode(mode):
    mode = AutoresetMode(mode) if not isinstance(mode, AutoresetMode) else mode
    if mode not in _AUTORESET_NAMES:
        raise ValueError("cartsim: autoreset_mode %s is not supported (NEXT_STEP or SAME_STEP: the library "
                         "cannot reset a chosen subset of environments)" % mode)
    return mode


class _Seeds:
    """The library's reset seeds: reset(seed=s) uses s, reset() the next draw of a
    generator seeded by the last seed given (or the constructor's)."""

    def __init__(self, seed):
        self.generator = np.random.default_rng(seed)

    def next(self, seed):
        if seed is None:
            return int(self.generator.integers(0, 2**63 - 1))
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError("cartsim: seed must be a non-negative int (one for the whole batch), not %r" % (seed,))
        self.generator = np.random.default_rng(int(seed))
        return int(seed)


def _warn_render_without_mode(who):
    """Gymnasium's warning for render() on an environment made without a render_mode."""
    gymnasium.logger.warn("You are calling render method without specifying any render mode. You can specify the "
                          "render_mode at initialization, e.g. %s(..., render_mode=\"rgb_array\")" % who, stacklevel=3)


def _inside_gymnasium_sync_make_vec():
    """Whether gymnasium.make_vec(..., vectorization_mode="sync" or "async") is
    making this environment: each of its num_envs copies is then a batch of one."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "create_single_env" and code.co_filename.endswith(os.path.join("envs", "registration.py")):
            return True
        frame = frame.f_back
    return False


# What make_vec and VectorEnv take besides env and num_envs.
# (Batch's autoreset is autoreset_mode here, and has no meaning for one environment.)
VECTOR_KEYWORDS = ("seed", "autoreset_mode", "render_mode", "max_episode_steps") + tuple(
    k for k in Batch.KEYWORDS if k != "autoreset")
# What make and Env take besides env.
SINGLE_KEYWORDS = ("render_mode", "max_episode_steps") + tuple(k for k in Batch.KEYWORDS if k != "autoreset")


class KeywordError(TypeError):
    """Python's TypeError for a keyword (one that is neither a setting nor one of the
    environment's params, a param given twice or not a number), worded for the
    function the user called: called_by(caller) names another."""

    def __init__(self, caller, words):
        self.words = words                    # words(caller) -> the message
        super().__init__(words(caller))

    def called_by(self, caller):
        return KeywordError(caller, self.words)


_UNKNOWN_PARAM = re.compile(r"unknown parameter '(.*)' \((?:params: (.*)|this environment has no params)\)$")


def _is_param_value(value):
    """A number, a bool, or a (lo, hi) pair of numbers (drawn per environment)."""
    if isinstance(value, (tuple, list)):
        return len(value) == 2 and all(_is_param_value(v) for v in value)
    return isinstance(value, (bool, int, float, np.number))


def open_batch(caller, env, num_envs, keywords, accepted, **fixed):
    """A Batch of `env` from the caller's keywords: the settings it accepts, and the
    environment's params by name (is_slippery=False, as gym.make takes them) beside
    or instead of params={...}. A keyword that is neither is a KeywordError, known
    from the library's refusal of an unknown param (which lists the params)."""
    settings = {k: v for k, v in keywords.items() if k in accepted}
    options = {k: v for k, v in keywords.items() if k not in accepted}
    not_numbers = [k for k, v in options.items() if not _is_param_value(v)]
    if options:
        params = dict(settings.get("params") or {})
        for name, value in options.items():
            if name in params:
                raise KeywordError(caller, lambda c, n=name: "%s() got param %r twice: as a keyword and in params"
                                   % (c, n))
            params[name] = 0.0 if name in not_numbers else value   # a stand-in until the name is known
        settings["params"] = params
    try:
        batch = Batch(library_env(env), num_envs, **settings, **fixed)
    except CartsimError as e:
        unknown = _UNKNOWN_PARAM.match(str(e))
        if unknown is None or unknown.group(1) not in options:
            raise
        params = unknown.group(2).split(", ") if unknown.group(2) else []
        raise KeywordError(caller, lambda c: keyword_error(c, unknown.group(1), accepted, params, env)) from None
    if not_numbers:
        batch.close()
        name = not_numbers[0]
        raise KeywordError(caller, lambda c: "%s(): param %s must be a number, a bool or a (lo, hi) pair, not %r"
                           % (c, name, options[name]))
    return batch


class VectorEnv(gymnasium.vector.VectorEnv):
    """num_envs environments stepped at once by one fused kernel.

    env: a Gymnasium id ("CartPole-v1"), a cartsim name ("cartpole") or a path to a .env file.
    Keywords: seed (the first reset's when reset() is given none), backend ("auto", "cpu",
    "cuda", "interp"), dtype (float32, float64), threads (default: every core), params
    ({name: value or (lo, hi)}: a range is drawn per environment at each reset),
    autoreset_mode (NEXT_STEP, SAME_STEP), unroll, fusion, persistent (rollouts), policy
    (what rollout() runs when given none), strict, render_mode ("rgb_array"), env_dir, cache_dir, no_cache;
    and the environment's params by name, as gym.make takes its options (is_slippery=False).

    step() and reset() return NumPy views of the library's buffers: valid until the next
    step, reset, rollout or close of this object (copy what you keep).
    """

    def __init__(self, env="CartPole-v1", num_envs=1, *, seed=None, autoreset_mode=AutoresetMode.NEXT_STEP,
                 render_mode=None, max_episode_steps=None, **batch_settings):
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.batch = open_batch("cartsim.VectorEnv", env, num_envs, batch_settings, VECTOR_KEYWORDS,
                                autoreset=_AUTORESET_NAMES[self.autoreset_mode])
        if max_episode_steps is not None and max_episode_steps != self.batch.max_steps:
            self.batch.close()
            raise ValueError("cartsim: %s truncates at %d steps (its max_steps); change it in the .env file, "
                             "not with max_episode_steps=%d" % (self.batch.name, self.batch.max_steps,
                                                                  max_episode_steps))
        self.num_envs = self.batch.num_envs
        self.single_observation_space, self.single_action_space, metadata = single_spaces(self.batch)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = dict(metadata, autoreset_mode=self.autoreset_mode)
        if render_mode not in (None, "rgb_array"):
            raise ValueError("cartsim: render_mode must be None or 'rgb_array', not %r" % (render_mode,))
        self.render_mode = render_mode
        self._seeds = _Seeds(seed)
        self._renderer = None

    # ------------------------------------------------------------ the Gymnasium API

    def reset(self, *, seed=None, options=None):
        if options:
            raise ValueError("cartsim: reset options are not supported (%s)" % ", ".join(options))
        self.batch.reset(self._seeds.next(seed))
        return self.batch.observation(), _vector_info(self.batch.info())

    def step(self, actions):
        batch = self.batch
        batch.step(actions)
        obs, rewards, terminated, truncated = batch.results()
        if not batch.flat_obs:
            obs = batch.observation()
        info = _vector_info(batch.info())
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            ended = terminated | truncated
            if ended.any():
                final_obs = np.full(self.num_envs, None, dtype=object)
                source = batch.observation(final=True)
                for i in np.flatnonzero(ended):
                    final_obs[i] = _one(source, i)
                final_info = _vector_info(batch.info(final=True), ended)
                info.update({"final_obs": final_obs, "_final_obs": ended, "final_info": final_info,
                             "_final_info": ended.copy()})
        return obs, rewards, terminated, truncated, info

    def render(self):
        """One (height, width, 3) uint8 frame per environment, as Gymnasium's SyncVectorEnv gives them."""
        if self.render_mode != "rgb_array":
            _warn_render_without_mode("cartsim.make_vec")
            return None
        return tuple(self.render_tiles(i, 1, 1) for i in range(self.num_envs))

    def render_tiles(self, first=0, count=None, columns=0):
        """Environments [first, first + count) in one frame, `columns` tiles a row (0: a square)."""
        if self._renderer is None:
            self._renderer = Renderer(self.batch)
        return self._renderer.rgb(first, self.num_envs - first if count is None else count, columns)

    def close_extras(self, **kwargs):
        self._renderer = None
        self.batch.close()

    # ------------------------------------------------------------ beyond Gymnasium

    def rollout(self, steps, policy=None, weights=None):
        """`steps` fused steps of every environment inside the kernel, the actions chosen
        by `policy`, same-step auto-reset. Returns the statistics (a dict: mean_return,
        episodes, checksum, env_steps_per_sec, per-environment episode_returns ...).

        The rollout continues from the environments' current state (what the last
        reset and steps left, next-step restarts pending included), and leaves them
        where it ended: the next step() or rollout() goes on from there. So
        reset(seed=s) then rollout(n, policy=p) is `cartsim run --seed s --steps n
        --policy p`, bit for bit.

        policy: None, the policy given at construction (random by default); a policy
        name ("random", "heuristic" or another the .env declares, "linear", "mlp:32");
        a cartsim.Policy (cartsim.train's result.policy, cartsim.load_policy); or the
        path of a policy file. weights: a linear or MLP policy's, (num_weights,) or
        (num_envs, num_weights), kept for the next rollouts; a Policy or a file brings
        its own. A policy is compiled into the kernel: each one other than the
        construction's runs in a sibling batch opened with the same settings on first
        use and kept until close(), the state copied into it and back
        (cs_env_copy_state), which changes no bit.
        """
        batch, weights = self._batch_for(policy, weights)
        if weights is not None:
            batch.set_weights(weights)
        if batch is self.batch:
            return batch.rollout(steps)
        batch.copy_state_from(self.batch)
        try:
            return batch.rollout(steps)
        finally:   # a strict-mode error still leaves the state the whole rollout reached
            self.batch.copy_state_from(batch)

    def _batch_for(self, policy, weights):
        """(the batch that rolls out `policy`, the weights to set in it or None)."""
        from .training import Policy, load_policy   # training imports this module
        if policy is None:
            return self.batch, weights
        if isinstance(policy, (str, os.PathLike)) and os.path.isfile(policy):
            policy = load_policy(policy)
        if isinstance(policy, Policy):
            if policy.env != self.batch.name:
                raise ValueError("cartsim: the policy is for %s, not %s" % (policy.env, self.batch.name))
            if weights is not None:
                raise ValueError("cartsim: a trained policy brings its own weights: pass weights= with a name")
            return self.batch.with_policy(policy.policy), policy.weights
        if not isinstance(policy, str):
            raise TypeError("cartsim: policy must be None, a name, a cartsim.Policy or a policy file's path, "
                            "not %r" % (policy,))
        return self.batch.with_policy(policy), weights

    def evaluate(self, weights=None, episodes=100, seed=0):
        """Returns of `episodes` fresh episodes of the policy (see Batch.evaluate)."""
        return self.batch.evaluate(weights, episodes, seed)

    def device_arrays(self):
        """The cuda backend's device buffers as DLPack arrays (see Batch.device_arrays)."""
        return self.batch.device_arrays()

    def step_device(self):
        """Steps with the actions written into device_arrays()["actions"]; returns nothing
        (the results are in the device arrays, and in the host views when asked)."""
        self.batch.step_device()

    def get_state(self):
        return self.batch.get_state()

    def set_state(self, state, episode_steps=None):
        self.batch.set_state(state, episode_steps)


class Env(gymnasium.Env):
    """One environment, as gymnasium.make gives it: no auto-reset (call reset
    after an episode ends), truncation at the environment's max_steps. Same
    keywords as VectorEnv (params by name included)."""

    def __init__(self, env="CartPole-v1", *, render_mode=None, **batch_settings):
        batch_settings.pop("max_episode_steps", None)
        if _inside_gymnasium_sync_make_vec():
            gymnasium.logger.warn("gymnasium.make_vec(\"cartsim/...\", vectorization_mode=\"sync\" or \"async\") "
                                  "steps its environments one at a time, each a batch of one: leave "
                                  "vectorization_mode out (\"vector_entry_point\", the registered default) "
                                  "for one fused batch of all of them", stacklevel=2)
        self.batch = open_batch("cartsim.Env", env, 1, batch_settings, SINGLE_KEYWORDS, autoreset="disabled")
        self.observation_space, self.action_space, self.metadata = single_spaces(self.batch)
        if render_mode not in (None, "rgb_array"):
            raise ValueError("cartsim: render_mode must be None or 'rgb_array', not %r" % (render_mode,))
        self.render_mode = render_mode
        self._renderer = None
        self._action_shape = (1,) + self.action_space.shape
        # a row of floats, no info: one library call a step (cs_env_step_one)
        self._step_one = self.batch.step_one if self.batch.flat_obs and not self.batch.info_items else None

    # A single environment hands out copies, as Gymnasium's own do: it is used
    # one step at a time, where a copy costs nothing worth saving.
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if options:
            raise ValueError("cartsim: reset options are not supported (%s)" % ", ".join(options))
        self.batch.reset(int(self.np_random.integers(0, 2**63 - 1)) if seed is None else seed)
        return _one(self.batch.observation(), 0), _single_info(self.batch.info())

    def step(self, action):
        if self._step_one is not None:
            obs, reward, terminated, truncated = self._step_one(action)
            return obs, reward, terminated, truncated, {}
        b = self.batch
        b.step(np.asarray(action).reshape(self._action_shape))
        return (_one(b.observation(), 0), float(b.rewards()[0]), bool(b.terminated()[0]), bool(b.truncated()[0]),
                _single_info(b.info()))

    def render(self):
        if self.render_mode != "rgb_array":
            _warn_render_without_mode("cartsim.make")
            return None
        if self._renderer is None:
            self._renderer = Renderer(self.batch)
        return self._renderer.rgb(0, 1, 1)

    def close(self):
        self._renderer = None
        self.batch.close()

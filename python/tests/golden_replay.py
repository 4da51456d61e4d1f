"""Replaying the suite's golden files (tests/golden_suite/*.jsonl, written by the
references' own code) through cartsim: every recorded step and reset runs once,
all of them side by side as the environments of one batch.

Each step record is a transition of its own: the batch's environment i is set to
record i's state (set_state by the variables' names), told record i's random
outcomes (replay_draws: the words that make cartsim's draws come out as the
reference's did), and stepped with record i's action; then its next state,
observation, reward, flags and info must equal the record's. Each reset record
likewise: a reset whose restart words give the reference's draws, and its state,
observation and info. The kernel that runs is the shipped one; only the source
of its random words differs.

An environment's test supplies a Mapping: how the reference's state (names and
values) becomes cartsim's, how the reference's draws become words, and how the
outcomes compare. A suite's file lists its golden files as a table of Golden rows
and runs them all through one test (golden_params, check_replay). The word makers below turn an outcome into the 32-bit word that
cartsim's draw of that kind maps to it (docs/dsl.md, "Random draws").
"""
import json
import math
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import cartsim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden_suite")

TWO32 = 2.0 ** 32


def load(stem: str):
    """(meta, resets, steps) of tests/golden_suite/STEM.jsonl."""
    with open(os.path.join(GOLDEN, stem + ".jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    meta = lines[0]["meta"]
    resets = [r for r in lines[1:] if r.get("reset")]
    steps = [r for r in lines[1:] if not r.get("reset")]
    return meta, resets, steps


# ---- words: an outcome as the word cartsim's draw of that kind maps to it ----

def word_for_uniform(u: float, f32: bool) -> int:
    """A word whose uniform is u rounded down to the word's grid (f64: 2^-32, f32: 2^-24):
    the closest from below, so u' <= u < u' + grid."""
    if f32:
        return int(math.floor(u * 2.0 ** 24)) << 8
    return min(int(math.floor(u * TWO32)), 0xFFFFFFFF)


def word_for_interval(lo: float, hi: float, f32: bool) -> int:
    """A word whose uniform lies in [lo, hi), its middle on the grid."""
    return word_for_uniform((lo + hi) / 2.0, f32)


def word_for_randint(k: int, n: int) -> int:
    """A word w with (w * n) >> 32 == k (randint(n), BOUNDED): the middle of k's range."""
    lo = -(-k * 2 ** 32 // n)              # ceil(k * 2^32 / n)
    hi = -(-(k + 1) * 2 ** 32 // n)        # the next outcome's first word
    return (lo + hi - 1) // 2


def word_for_categorical(k: int, probs: List[float], f32: bool) -> int:
    """A word whose uniform picks k in categorical(probs): the middle of [sum(p[:k]), sum(p[:k+1])),
    the running sums added in order in the compile's real type."""
    acc, sums = (np.float32(0) if f32 else 0.0), []
    for p in probs:
        acc = acc + (np.float32(p) if f32 else p)
        sums.append(float(acc))
    lo = sums[k - 1] if k > 0 else 0.0
    return word_for_interval(lo, sums[k], f32)


def word_for_bernoulli(b: bool, p: float, f32: bool) -> int:
    """A word whose uniform u gives bernoulli(p) == b (u < p is true)."""
    return word_for_interval(0.0, p, f32) if b else word_for_interval(p, 1.0, f32)


def _box_muller(k1: int, k2: int, f32: bool) -> float:
    """cartsim's normal() from the grid steps k1, k2 of its two uniforms (docs/dsl.md:
    sqrt(-2 log(1 - u1)) cos(2 pi u2), in the compile's real type; NumPy's log and cos
    stand in for cartsim's, within an ulp)."""
    if f32:
        u1, u2 = np.float32(k1 * 2.0 ** -24), np.float32(k2 * 2.0 ** -24)
        radius = np.sqrt(np.float32(-2) * np.log(np.float32(1) - u1))
        return float(radius * np.cos(np.float32(2 * math.pi) * u2))
    u1, u2 = k1 * 2.0 ** -32, k2 * 2.0 ** -32
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2 * math.pi * u2)


def words_for_normal(z: float, f32: bool) -> List[int]:
    """The two words (u1's, then u2's) whose normal() is z, as closely as the words'
    grid allows: the radius sqrt(-2 log(1 - u1)) the first grid step at or above |z|,
    then the angle whose cosine brings it down to z. The angle's cosine is flat there,
    so the result lies within an ulp or two of z, never exactly on it by construction
    (a normal is not a word's image: a test states its tolerance)."""
    if z == 0.0:
        return [0, 0]
    bits = 24 if f32 else 32
    top, grid = 2 ** bits - 1, 2.0 ** -bits
    k1 = min(int(math.ceil(-math.expm1(-z * z / 2.0) / grid)), top)
    while k1 < top and abs(_box_muller(k1, 0, f32)) < abs(z):
        k1 += 1
    radius = abs(_box_muller(k1, 0, f32))
    angle = math.acos(min(abs(z) / radius, 1.0))
    if z < 0:
        angle = math.pi - angle
    k2 = int(round(angle / (2 * math.pi) / grid))
    best = min(((a, b) for a in (k1, min(k1 + 1, top)) for b in range(max(k2 - 4, 0), min(k2 + 5, top + 1))),
               key=lambda ab: abs(_box_muller(ab[0], ab[1], f32) - z))
    shift = 32 - bits
    return [best[0] << shift, best[1] << shift]


# ---- the mapping an environment's test supplies ----

@dataclass
class Mapping:
    """How one environment's golden records become cartsim's.

    state(ref_state) -> {cartsim variable: value}; steps(ref_state) -> the episode's
    steps so far (truncation counts them); step_words(record, f32) -> the step's words
    ([n_step_draws]) and reset_words(record, f32) -> the reset's; obs, info compare
    the outcome (ref value, cartsim value) and raise AssertionError on a difference.
    kept: the states declared `keep` (gymnax's DeepSea counters): a reset record made
    by an auto-reset ("auto": true) shows the finished episode's values there, which
    an explicit reset does not give, so replay_resets compares them on explicit resets only."""
    state: Callable[[dict], Dict[str, object]]
    steps: Callable[[dict], int]
    step_words: Callable[[dict, bool], List[int]]
    reset_words: Callable[[dict, bool], List[int]]
    obs: Callable[[object], object] = lambda ref: np.asarray(ref)
    info: Dict[str, Callable[[object], object]] = field(default_factory=dict)
    reward: Callable[[object], float] = float
    kept: tuple = ()


def _open(env: str, n: int, params: dict, backend: str, dtype: str, autoreset: str):
    return cartsim.make_vec(env, n, backend=backend, dtype=dtype, threads=1, params=params,
                            autoreset_mode=autoreset)


def _words(rows: List[List[int]], count: int, n: int) -> np.ndarray:
    """[count][n] uint32 from each lane's words for the environment's own draws (the
    random policy's, numbered after them, are never used by a step and stay 0)."""
    out = np.zeros((max(count, 1), n), dtype=np.uint32)
    for i, row in enumerate(rows):
        if len(row) > count:
            raise AssertionError("lane %d: %d words for %d draws" % (i, len(row), count))
        out[:len(row), i] = row
    return out


def _same(what: str, want, got, rtol: float):
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        raise AssertionError("%s: shape %s, want %s" % (what, got.shape, want.shape))
    if rtol and want.dtype.kind == "f":
        ok = np.allclose(got, want, rtol=rtol, atol=0)
    else:
        ok = np.array_equal(got, want)
    if not ok:
        raise AssertionError("%s: got %s, want %s" % (what, got.tolist(), want.tolist()))


def replay_steps(env: str, stem: str, m: Mapping, params: Optional[dict] = None, backend: str = "interp",
                 dtype: str = "float64", rtol: float = 0.0, limit: Optional[int] = None) -> int:
    """Every step record of STEM through cartsim; returns how many were checked."""
    _, _, steps = load(stem)
    steps = steps[:limit] if limit else steps
    n = len(steps)
    vec = _open(env, n, params or {}, backend, dtype, "NextStep")
    try:
        batch = vec.batch
        f32 = dtype == "float32"
        vec.reset(seed=0)
        states: Dict[str, list] = {v.name: [] for v in batch.state_vars}
        for r in steps:
            mapped = m.state(r["state"])
            for name in states:
                states[name].append(mapped[name])
        state = {name: np.array(values) for name, values in states.items()}
        batch.set_state(state, np.array([m.steps(r["state"]) for r in steps], dtype=np.int32))
        n_draws = _draw_counts(batch)[0]
        step_words = _words([m.step_words(r, f32) for r in steps], n_draws, n)
        batch.replay_draws(step_words, None)
        actions = np.array([r["action"] for r in steps])
        obs, rewards, terminated, truncated, info = vec.step(actions if batch.discrete else actions.reshape(n, -1))
        got_state = batch.get_state()
        for i, r in enumerate(steps):
            where = "%s episode %d t %d" % (stem, r["episode"], r["t"])
            want = m.state(r["next_state"])
            for name in states:
                _same(where + " next " + name, want[name], got_state[name][i], rtol)
            _same(where + " obs", m.obs(r["obs"]), _lane(obs, i), rtol)
            _same(where + " reward", m.reward(r["reward"]), rewards[i], rtol)
            _same(where + " terminated", bool(r["terminated"]), bool(terminated[i]), 0)
            _same(where + " truncated", bool(r["truncated"]), bool(truncated[i]), 0)
            for key, convert in m.info.items():
                _same(where + " info " + key, convert(r["info"][key]), info[key][i], rtol)
        return n
    finally:
        vec.close()


def replay_resets(env: str, stem: str, m: Mapping, params: Optional[dict] = None, backend: str = "interp",
                  dtype: str = "float64", rtol: float = 0.0) -> int:
    """Every reset record of STEM: the reset's state, observation and info."""
    _, resets, _ = load(stem)
    n = len(resets)
    vec = _open(env, n, params or {}, backend, dtype, "NextStep")
    try:
        batch = vec.batch
        f32 = dtype == "float32"
        n_draws = _draw_counts(batch)[1]
        batch.replay_draws(None, _words([m.reset_words(r, f32) for r in resets], n_draws, n))
        obs, info = vec.reset(seed=0)
        got_state = batch.get_state()
        for i, r in enumerate(resets):
            where = "%s reset of episode %d" % (stem, r["episode"])
            want = m.state(r["state"])
            for v in batch.state_vars:
                if v.name in m.kept and r.get("auto"):
                    continue
                _same(where + " " + v.name, want[v.name], got_state[v.name][i], rtol)
            _same(where + " obs", m.obs(r["obs"]), _lane(obs, i), rtol)
            for key, convert in m.info.items():
                if key in r.get("info", {}):
                    _same(where + " info " + key, convert(r["info"][key]), info[key][i], rtol)
        return n
    finally:
        vec.close()


def _lane(obs, i):
    return tuple(item[i] for item in obs) if isinstance(obs, tuple) else obs[i]


def _draw_counts(batch):
    """(step draws, restart draws) of the batch's kernel."""
    return batch.n_step_draws, batch.n_restart_draws


# ---- a suite's table: each golden file a row, each row replayed on each of its runs ----

@dataclass
class Golden:
    """One golden file in a suite's table (python/tests/test_suite_*.py).

    stem: the golden file's, the row's name in test ids; env: the .env file, from the
    checkout's root; mapping(): the row's Mapping, made per test (it may read the file's
    meta); steps, resets: how many records each replay checks, exactly, or at least
    where exact is False; runs: the (backend, dtype) pairs it replays on; step_rtol,
    reset_rtol: the reals' relative tolerance by dtype, 0 (bit-exact) where not given."""
    stem: str
    env: str
    mapping: Callable[[], Mapping]
    steps: int
    resets: int
    runs: Sequence[Tuple[str, str]]
    params: Optional[dict] = None
    exact: bool = True
    step_rtol: Dict[str, float] = field(default_factory=dict)
    reset_rtol: Dict[str, float] = field(default_factory=dict)


def golden_params(table: Sequence[Golden]):
    """pytest parameters (row, kind, backend, dtype) for every row's steps, then its
    resets, on each of its runs; ids STEM-KIND-BACKEND-DTYPE."""
    import pytest
    return [pytest.param(row, kind, backend, dtype, id="%s-%s-%s-%s" % (row.stem, kind, backend, dtype))
            for row in table for kind in ("steps", "resets") for backend, dtype in row.runs]


def check_replay(row: Golden, kind: str, backend: str, dtype: str):
    """The row's step records (kind "steps") or reset records ("resets") replayed on backend
    and dtype: each as the reference's, and as many as the row says."""
    replay, want, rtol = ((replay_steps, row.steps, row.step_rtol) if kind == "steps" else
                          (replay_resets, row.resets, row.reset_rtol))
    n = replay(os.path.join(ROOT, row.env), row.stem, row.mapping(), row.params, backend=backend, dtype=dtype,
               rtol=rtol.get(dtype, 0.0))
    if row.exact:
        assert n == want, "%s: %d %s records, want %d" % (row.stem, n, kind, want)
    else:
        assert n >= want, "%s: %d %s records, want at least %d" % (row.stem, n, kind, want)

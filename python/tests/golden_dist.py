"""Comparing cartsim's own random outcomes (its Philox draws, nothing replayed) with
a reference's distribution files (tests/golden_suite/STEM.dist.json, written by the
reference's own code over 10,000 samples; tests/golden_suite/README.md).

A two-sample chi-square test of homogeneity: are the reference's counts and cartsim's
counts over the same bins drawn from one distribution? Bins are merged with their
neighbours until each holds at least MIN_BIN of the two samples together (a normal's
sparse tails), and the statistic's tail probability comes from Wilson and Hilferty's
cube-root normal approximation (no SciPy in the test venv). Tests fail below P_FAIL, a
generous threshold: a test at a fixed seed then fails only for a wrong distribution,
which each test shows by failing one on purpose.
"""
import json
import math
import os
from typing import Dict, List, Sequence, Tuple

import numpy as np

import cartsim
from golden_replay import GOLDEN

P_FAIL = 1e-6
MIN_BIN = 20
SAMPLES = 10000


def load(stem: str) -> dict:
    """tests/golden_suite/STEM.dist.json."""
    with open(os.path.join(GOLDEN, stem + ".dist.json")) as f:
        return json.load(f)


def _merged(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Adjacent bins summed, left to right, until each holds MIN_BIN of both samples
    together; a short remainder joins the last full bin."""
    ma, mb, ca, cb = [], [], 0.0, 0.0
    for x, y in zip(a, b):
        ca, cb = ca + x, cb + y
        if ca + cb >= MIN_BIN:
            ma.append(ca), mb.append(cb)
            ca = cb = 0.0
    if ca + cb > 0:
        if ma:
            ma[-1] += ca
            mb[-1] += cb
        else:
            ma.append(ca), mb.append(cb)
    return np.array(ma), np.array(mb)


def chi2_p(ref_counts: Sequence[float], got_counts: Sequence[float]) -> float:
    """p-value of the hypothesis that both count vectors (the same bins, in order) come
    from one distribution."""
    a, b = _merged(np.asarray(ref_counts, dtype=np.float64), np.asarray(got_counts, dtype=np.float64))
    if len(a) < 2:
        return 1.0
    total = a + b
    stat = 0.0
    for row in (a, b):
        expected = total * row.sum() / total.sum()
        stat += float(np.sum((row - expected) ** 2 / expected))
    dof = len(a) - 1
    z = ((stat / dof) ** (1.0 / 3.0) - (1.0 - 2.0 / (9.0 * dof))) / math.sqrt(2.0 / (9.0 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def value_counts(ref: Dict[str, int], values) -> Tuple[List[int], List[int]]:
    """(the reference's counts, cartsim's) over the outcomes the reference counted
    ({value: count}). An outcome the reference never had is an AssertionError: the
    outcomes here are few and each far more likely than 1 in 10,000."""
    keys = sorted(ref, key=float)
    index = {float(k): i for i, k in enumerate(keys)}
    got = [0] * len(keys)
    for v in np.asarray(values, dtype=np.float64).ravel():
        if float(v) not in index:
            raise AssertionError("cartsim drew %r, an outcome the reference never had (%s)" % (v, ", ".join(keys)))
        got[index[float(v)]] += 1
    return [ref[k] for k in keys], got


def histogram_counts(ref: dict, values) -> Tuple[List[int], List[int]]:
    """(the reference's counts, cartsim's) over the reference's bins (its "edges", from its
    own sample's min to max): values past the ends count in the end bins."""
    edges = np.asarray(ref["edges"], dtype=np.float64)
    index = np.searchsorted(edges, np.asarray(values, dtype=np.float64).ravel(), side="right") - 1
    got = np.bincount(np.clip(index, 0, len(edges) - 2), minlength=len(edges) - 1)
    return list(ref["counts"]), got.tolist()


def sampled(env: str, seed: int, state: dict = None, actions=None, **params):
    """cartsim's states after a reset at `seed` of SAMPLES environments (interp, f32), or,
    given a state (every variable by name, one value for all; its "time" the episode's
    steps) and actions, after one step from it: (state, reward)."""
    vec = cartsim.make_vec(env, SAMPLES, backend="interp", dtype="float32", threads=1, params=params)
    try:
        vec.reset(seed=seed)
        if state is None:
            return vec.batch.get_state(), None
        batch = vec.batch
        batch.set_state({v.name: np.broadcast_to(np.asarray(state[v.name]), (SAMPLES,) + v.shape).copy()
                         for v in batch.state_vars}, np.full(SAMPLES, int(state["time"]), dtype=np.int32))
        _, reward, _, _, _ = vec.step(np.full(SAMPLES, actions))
        return batch.get_state(), np.array(reward)
    finally:
        vec.close()

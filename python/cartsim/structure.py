"""What a batch holds, by the names its .env file gives: the state variables
and the observation items (scalars or arrays, reals, ints or bools), their
Gymnasium spaces, and views of the library's buffers shaped like them.

The library keeps every buffer a row per element and a column per
environment ([element][num_envs]); a view here is that buffer with the axes
swapped, shaped [num_envs, *item_shape], without a copy.
"""
from dataclasses import dataclass
from typing import List, Tuple

import gymnasium
import numpy as np

from ._native import ffi, lib, text

_VALUE_TYPES = {lib.CS_VALUE_REAL: "real", lib.CS_VALUE_INT: "int", lib.CS_VALUE_BOOL: "bool"}


@dataclass(frozen=True)
class StateVar:
    name: str
    type: str                  # "real", "int" or "bool"
    shape: Tuple[int, ...]     # () for a scalar
    first: int                 # its rows in the state, [first, first + size)
    size: int


@dataclass(frozen=True)
class ObsItem:
    name: str
    discrete: bool             # int64 buffer (Discrete / MultiDiscrete), else float32 (Box)
    type: str
    shape: Tuple[int, ...]
    offset: int
    size: int
    low: float
    high: float
    n: int


def _dims(rank, dims):
    return tuple(int(dims[k]) for k in range(rank))


def describe(ptr, info) -> Tuple[List[StateVar], List[ObsItem]]:
    """The batch's state variables and observation items, from the library."""
    state, items = [], []
    s = ffi.new("cs_state_info *")
    for k in range(int(info.n_state_vars)):
        if lib.cs_env_state_info(ptr, k, s) != lib.CS_OK:
            raise RuntimeError("cartsim: cs_env_state_info %d failed" % k)
        state.append(StateVar(text(s.name), _VALUE_TYPES[s.type], _dims(s.rank, s.dims), int(s.first), int(s.size)))
    o = ffi.new("cs_obs_info *")
    for k in range(int(info.n_obs_items)):
        if lib.cs_env_obs_info(ptr, k, o) != lib.CS_OK:
            raise RuntimeError("cartsim: cs_env_obs_info %d failed" % k)
        items.append(ObsItem(text(o.name), o.space == lib.CS_SPACE_DISCRETE, _VALUE_TYPES[o.type],
                             _dims(o.rank, o.dims), int(o.offset), int(o.size), float(o.low), float(o.high),
                             int(o.n)))
    return state, items


@dataclass(frozen=True)
class InfoItem:
    name: str
    type: str
    shape: Tuple[int, ...]
    offset: int
    size: int


def describe_info(ptr, info) -> List[InfoItem]:
    """The batch's info values (Gymnasium's info dict), from the library."""
    items = []
    d = ffi.new("cs_info_item_desc *")
    for k in range(int(info.n_info_items)):
        if lib.cs_env_info_item(ptr, k, d) != lib.CS_OK:
            raise RuntimeError("cartsim: cs_env_info_item %d failed" % k)
        items.append(InfoItem(text(d.name), _VALUE_TYPES[d.type], _dims(d.rank, d.dims), int(d.offset), int(d.size)))
    return items


def info_dict(rows: np.ndarray, items: List[InfoItem]) -> dict:
    """{name: (num_envs, *shape)} from the info buffer's rows ([info_dim][num_envs] doubles):
    reals as float64 (Gymnasium's "prob" is a Python float), ints as int64, bools as int8
    (Taxi's action_mask)."""
    n = rows.shape[1]
    dtypes = {"real": np.float64, "int": np.int64, "bool": np.int8}
    return {it.name: rows[it.offset:it.offset + it.size].T.reshape((n,) + it.shape).astype(dtypes[it.type])
            for it in items}


def is_flat(items: List[ObsItem]) -> bool:
    """The classic layout: every item a box scalar, the observation one float vector."""
    return all(not it.discrete and it.shape == () for it in items)


def item_space(it: ObsItem) -> gymnasium.spaces.Space:
    if it.discrete:
        if it.shape == ():
            return gymnasium.spaces.Discrete(it.n)
        return gymnasium.spaces.MultiDiscrete(np.full(it.shape, it.n, dtype=np.int64))
    return gymnasium.spaces.Box(np.float32(it.low), np.float32(it.high), it.shape, np.float32)


def observation_space(items: List[ObsItem], obs_dim: int) -> gymnasium.spaces.Space:
    """One environment's observation space: a Box over the float vector for the
    classic layout, the item's space for one item, else a Tuple of them."""
    if is_flat(items):
        low = np.array([it.low for it in items], dtype=np.float32)
        high = np.array([it.high for it in items], dtype=np.float32)
        return gymnasium.spaces.Box(low, high, (obs_dim,), np.float32)
    if len(items) == 1:
        return item_space(items[0])
    return gymnasium.spaces.Tuple(tuple(item_space(it) for it in items))


def item_layout(it: ObsItem, num_envs: int):
    """(byte offset, shape, strides) of the item's view in its buffer."""
    size = 8 if it.discrete else 4
    strides, inner = [], 1
    for d in reversed(it.shape):
        strides.append(inner * num_envs * size)
        inner *= d
    return it.offset * num_envs * size, (num_envs,) + it.shape, (size,) + tuple(reversed(strides))


class State(dict):
    """A batch's state: a dict from each variable's name to its values, shaped
    [num_envs, *shape] in its own dtype (float, int32, bool). It is also the
    (num_envs, state_dim) array of doubles it always was, for code that
    indexes it so (np.asarray(state), state[:, k], state.shape). Either may be
    edited before set_state: a variable whose named array changed is taken from
    it, the others from the array of doubles."""

    def __init__(self, flat: np.ndarray, variables: List[StateVar], real_dtype):
        n = flat.shape[0]
        dtypes = {"real": real_dtype, "int": np.int32, "bool": np.bool_}
        super().__init__({v.name: flat[:, v.first:v.first + v.size].reshape((n,) + v.shape).astype(dtypes[v.type])
                          for v in variables})
        self.flat = flat
        self.as_given = {name: values.copy() for name, values in self.items()}

    def __array__(self, dtype=None, copy=None):
        return self.flat if dtype is None else self.flat.astype(dtype)

    def __getitem__(self, key):
        if isinstance(key, str):
            return super().__getitem__(key)
        return self.flat[key]

    @property
    def shape(self):
        return self.flat.shape

    def astype(self, dtype):
        return self.flat.astype(dtype)


def flat_state(state, variables: List[StateVar], num_envs: int, state_dim: int) -> np.ndarray:
    """(num_envs, state_dim) doubles from a State, a dict naming every variable, or an array."""
    if isinstance(state, State):
        flat = np.array(state.flat, dtype=np.float64)
        for v in variables:
            values = dict.__getitem__(state, v.name)
            if not np.array_equal(values, state.as_given[v.name]):
                flat[:, v.first:v.first + v.size] = np.asarray(values).reshape(num_envs, v.size)
        return flat
    if isinstance(state, dict):
        known = {v.name for v in variables}
        unknown = sorted(set(state) - known)
        missing = sorted(known - set(state))
        if unknown or missing:
            raise KeyError("cartsim: set_state needs every state variable by name (%s)%s%s"
                           % (", ".join(v.name for v in variables),
                              "; unknown: " + ", ".join(unknown) if unknown else "",
                              "; missing: " + ", ".join(missing) if missing else ""))
        flat = np.empty((num_envs, state_dim), dtype=np.float64)
        for v in variables:
            values = np.asarray(state[v.name])
            want = (num_envs,) + v.shape
            if values.shape != want:
                raise ValueError("cartsim: state '%s' must have shape %s, not %s" % (v.name, want, values.shape))
            flat[:, v.first:v.first + v.size] = values.reshape(num_envs, v.size)
        return flat
    return np.asarray(state, dtype=np.float64).reshape(num_envs, state_dim)


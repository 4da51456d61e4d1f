"""gymnax's MinAtar (Breakout, Freeway, Asterix, SpaceInvaders) against gymnax 1.0.1's own
episodes (tests/golden_suite, docs/suite.md sections 10-13): every step and reset
replayed with the reference's random outcomes, exact in float32 and float64 (MinAtar
computes with ints, bools and 0/1 maps only)."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_randint

BACKENDS = ["interp"]
DTYPES = ["float32", "float64"]


def gymnax_state(fields):
    """gymnax's EnvState (a record's dict) as cartsim's state by name: bools as bools,
    float maps as float arrays, ints as ints."""
    def state(ref):
        out = {}
        for name, kind in fields.items():
            value = ref[name]
            if kind == "bool":
                out[name] = bool(value)
            elif kind.startswith("float32"):
                out[name] = np.asarray(value, dtype=np.float64)
            elif kind.startswith("int32["):
                out[name] = np.asarray(value, dtype=np.int64)
            else:
                out[name] = int(value)
        return out
    return state


def minatar_mapping(meta, step_words, reset_words) -> Mapping:
    return Mapping(state=gymnax_state(meta["state_fields"]), steps=lambda ref: int(ref["time"]),
                   step_words=step_words, reset_words=reset_words,
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


# ---- Breakout-MinAtar: one draw at a reset (the ball's side), none in a step ----

def breakout_mapping(meta):
    return minatar_mapping(meta, lambda record, f32: [],
                           lambda record, f32: [word_for_randint(record["draws"]["ball_start"], 2)])


def _meta(stem):
    from golden_replay import load
    return load(stem)[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_breakout_steps_are_gymnax(backend, dtype, root):
    stem = "Breakout-MinAtar"
    n = replay_steps(root("envs/breakout.env"), stem, breakout_mapping(_meta(stem)), backend=backend, dtype=dtype)
    assert n > 150


@pytest.mark.parametrize("dtype", DTYPES)
def test_breakout_resets_are_gymnax(dtype, root):
    stem = "Breakout-MinAtar"
    assert replay_resets(root("envs/breakout.env"), stem, breakout_mapping(_meta(stem)), dtype=dtype) > 10

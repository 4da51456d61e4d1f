"""gymnax's bsuite environments against gymnax 1.0.1's own episodes
(tests/golden_suite, docs/suite.md sections 5 to 9): every step and reset record
replayed through the shipped .env files with the reference's random outcomes.
gymnax computes in float32; these environments compute only with ints, bools and
float32 values that f32 and f64 both hold exactly, so both compiles must be equal to
the bit (rtol 0), except where a section below states a tolerance."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_randint

BACKENDS = ["interp"]
DTYPES = ["float32", "float64"]


def same_names(ref):
    """gymnax's EnvState fields are cartsim's state variables, by the same names."""
    return dict(ref)


def f32(x):
    """The reference's float32 value (the golden files hold its exact double)."""
    return np.float32(x)


# ---- Catch-bsuite (section 5) ----

CATCH_COLUMNS = 5


def catch_mapping() -> Mapping:
    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]),
                   step_words=lambda r, _: [word_for_randint(r["draws"]["ball_x"], CATCH_COLUMNS)],
                   reset_words=lambda r, _: [word_for_randint(r["draws"]["ball_x"], CATCH_COLUMNS)],
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_catch_steps_are_gymnaxs(backend, dtype, root):
    assert replay_steps(root("envs/catch.env"), "Catch-bsuite", catch_mapping(), backend=backend, dtype=dtype) == 489


@pytest.mark.parametrize("dtype", DTYPES)
def test_catch_resets_are_gymnaxs(dtype, root):
    assert replay_resets(root("envs/catch.env"), "Catch-bsuite", catch_mapping(), dtype=dtype) == 56

"""gymnax's two bandits of misc against gymnax 1.0.1's own episodes (tests/golden_suite,
docs/suite.md sections 17 and 18): every step and reset record replayed through the
shipped .env files with the reference's random outcomes.

BernoulliBandit computes with float32 values that f32 and f64 both reproduce exactly.
GaussianBandit's normal draws come from XLA's erf_inv, which words cannot reproduce:
golden_replay.words_for_normal lands within an ulp or two of each, and its two
fused multiply-adds (XLA contracts mu + z * sigma) have no counterpart in the language.
So in f32 its reals are compared within 1e-6 relative; in f64 the draw is rounded to
float32 as gymnax's is and the product of two floats is exact, so the f64 compile gives
gymnax's fused results to the bit."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_bernoulli, word_for_randint, words_for_normal

BACKENDS = ["interp"]
DTYPES = ["float32", "float64"]


def same_names(ref):
    """gymnax's EnvState fields are cartsim's state variables, by the same names."""
    return dict(ref)


# ---- BernoulliBandit-misc (section 17) ----

def bernoulli_bandit_mapping() -> Mapping:
    def reset_words(r, f32):
        first = r["draws"]["p1"][0] == float(np.float32(0.1))    # choice's index 0: reward_prob
        return [word_for_randint(0 if first else 1, 2)]

    def step_words(r, f32):
        p = r["state"]["reward_probs"][r["action"]]
        return [word_for_bernoulli(bool(r["draws"]["success"]), p, f32)]

    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]), step_words=step_words,
                   reset_words=reset_words, obs=lambda ref: np.asarray(ref, dtype=np.float32),
                   info={"discount": float})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_bernoulli_bandit_steps_are_gymnaxs(backend, dtype, root):
    n = replay_steps(root("envs/bernoulli_bandit.env"), "BernoulliBandit-misc", bernoulli_bandit_mapping(),
                     backend=backend, dtype=dtype)
    assert n == 416


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_bandit_resets_are_gymnaxs(dtype, root):
    assert replay_resets(root("envs/bernoulli_bandit.env"), "BernoulliBandit-misc", bernoulli_bandit_mapping(),
                         dtype=dtype) == 8


# ---- GaussianBandit-misc (section 18) ----

def gaussian_bandit_mapping() -> Mapping:
    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]),
                   step_words=lambda r, f32: words_for_normal(r["draws"]["z"], f32),
                   reset_words=lambda r, f32: words_for_normal(r["draws"]["mu_z"], f32),
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


GAUSSIAN_RTOL = {"float32": 1e-6, "float64": 0.0}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_gaussian_bandit_steps_are_gymnaxs(backend, dtype, root):
    n = replay_steps(root("envs/gaussian_bandit.env"), "GaussianBandit-misc", gaussian_bandit_mapping(),
                     backend=backend, dtype=dtype, rtol=GAUSSIAN_RTOL[dtype])
    assert n == 416


@pytest.mark.parametrize("dtype", DTYPES)
def test_gaussian_bandit_resets_are_gymnaxs(dtype, root):
    assert replay_resets(root("envs/gaussian_bandit.env"), "GaussianBandit-misc", gaussian_bandit_mapping(),
                         dtype=dtype, rtol=GAUSSIAN_RTOL[dtype]) == 8

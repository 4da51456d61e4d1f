"""gymnax's two bandits of misc against gymnax 1.0.1's own episodes (tests/golden_suite,
docs/suite.md sections 17 and 18): every step and reset record replayed through the
shipped .env files with the reference's random outcomes.

BernoulliBandit computes with float32 values that f32 and f64 both reproduce exactly.
GaussianBandit's normal draws come from XLA's erf_inv, which words cannot reproduce:
golden_replay.words_for_normal lands within an ulp or two of each (its two fused
multiply-adds, where XLA contracts mu + z * sigma, are the language's fma). So in f32 its
reals are compared within 1e-6 relative; in f64 the draw is rounded to float32 as
gymnax's is, so the f64 compile gives gymnax's fused results to the bit."""
import numpy as np
import pytest

import cartsim
import golden_dist

from golden_replay import (Golden, Mapping, check_replay, golden_params, word_for_bernoulli, word_for_randint,
                           words_for_normal)

BACKENDS = ["cpu", "interp"]
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


# ---- GaussianBandit-misc (section 18) ----

def gaussian_bandit_mapping() -> Mapping:
    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]),
                   step_words=lambda r, f32: words_for_normal(r["draws"]["z"], f32),
                   reset_words=lambda r, f32: words_for_normal(r["draws"]["mu_z"], f32),
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


GAUSSIAN_RTOL = {"float32": 1e-6, "float64": 0.0}


# ---- both golden files: their steps and resets, each as gymnax's, on every backend and dtype ----

RUNS = [(backend, dtype) for backend in BACKENDS for dtype in DTYPES]
REPLAYS = [Golden("BernoulliBandit-misc", "envs/bernoulli_bandit.env", bernoulli_bandit_mapping, 416, 8, RUNS),
           Golden("GaussianBandit-misc", "envs/gaussian_bandit.env", gaussian_bandit_mapping, 416, 8, RUNS,
                  step_rtol=GAUSSIAN_RTOL, reset_rtol=GAUSSIAN_RTOL)]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnaxs(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)


# ---- cartsim's own draws against gymnax's distributions (STEM.dist.json) ----
# 10,000 environments at a fixed seed, Philox's words, against the reference's 10,000
# samples (golden_dist's two-sample chi-square); a param that changes the distribution
# a little fails each one, to show that it can.

sampled = golden_dist.sampled


def test_bernoulli_bandit_draws_are_gymnaxs(root):
    env = root("envs/bernoulli_bandit.env")
    ref = golden_dist.load("BernoulliBandit-misc")
    first_arm = ref["reset"]["state.reward_probs"]["[0]"]
    for params, ok in (({}, True), ({"reward_prob": 0.3}, False)):
        state, _ = sampled(env, 1, **params)
        p = golden_dist.chi2_p(*golden_dist.histogram_counts(first_arm, state["reward_probs"][:, 0]))
        assert (p > golden_dist.P_FAIL) == ok, params
    # a pull of arm 0 from the reference's first reset state, which pays with 0.9
    start = {"time": 0.0, "last_action": 0, "last_reward": 0, "exp_reward_best": np.float32(0.9),
             "reward_probs": np.float32([0.9, 1 - np.float32(0.9)])}
    for probs, ok in ((start["reward_probs"], True), (np.float32([0.87, 0.13]), False)):
        _, reward = sampled(env, 2, dict(start, reward_probs=probs), 0)
        p = golden_dist.chi2_p(*golden_dist.value_counts(ref["step"]["reward"]["all"], reward))
        assert (p > golden_dist.P_FAIL) == ok, probs


def test_gaussian_bandit_draws_are_gymnaxs(root):
    env = root("envs/gaussian_bandit.env")
    ref = golden_dist.load("GaussianBandit-misc")
    for params, ok in (({}, True), ({"sigma_p": 1.1}, False)):
        state, _ = sampled(env, 3, **params)
        p = golden_dist.chi2_p(*golden_dist.histogram_counts(ref["reset"]["state.mu"]["all"], state["mu"]))
        assert (p > golden_dist.P_FAIL) == ok, params
    # the pull's normal: arm 1 pays mu + z * sigma_l, so (reward - mu) / sigma_l is z
    start = {"time": 0.0, "last_action": 0, "last_reward": 0.0, "mu": -1.0}
    for params, ok in (({}, True), ({"sigma_l": 0.11}, False)):
        _, reward = sampled(env, 4, start, 1, **params)
        z = (reward.astype(np.float64) + 1.0) / 0.1
        p = golden_dist.chi2_p(*golden_dist.histogram_counts(ref["step"]["draw.z"]["all"], z))
        assert (p > golden_dist.P_FAIL) == ok, params


# ---- from Python, by gymnax's ids ----

@pytest.mark.parametrize("gym_id", ["BernoulliBandit-misc", "GaussianBandit-misc"])
def test_bandits_by_gymnax_id_and_field_names(gym_id):
    from test_suite_bsuite import check_by_name
    check_by_name(gym_id, gym_id, {})


def test_bandits_draw_their_arms():
    """BernoulliBandit's bars are as tall as the arms' chances (1.5 units of 120 pixels for
    a sure payout, from the line 36 pixels above the bottom); GaussianBandit's second bar
    hangs mu below its zero line."""
    from test_suite_bsuite import frame_of
    img = frame_of("BernoulliBandit-misc", {"time": 0.0, "last_action": 0, "last_reward": 0,
                                            "exp_reward_best": np.float32(0.9),
                                            "reward_probs": np.float32([0.9, 0.1])})
    assert img.shape == (240, 240, 3)
    column = img[:, 60].tolist()
    lit = [k for k, px in enumerate(column) if px == [250, 200, 80]]
    assert abs(len(lit) - 0.9 * 1.5 * 120) <= 2, len(lit)
    img = frame_of("GaussianBandit-misc", {"time": 0.0, "last_action": 1, "last_reward": -1.4, "mu": -1.0})
    column = img[:, 180].tolist()
    lit = [k for k, px in enumerate(column) if px == [250, 200, 80]]
    assert abs(len(lit) - 120) <= 2 and min(lit) >= 59, (len(lit), min(lit))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gaussian_bandit_time_is_xlas_fused_value(dtype):
    """The observation's time, (2 t) / 100 - 1, is XLA's fma(2t, float32(0.01), -1) rounded
    once, at every whole t from 1 to 250 (plain float32 arithmetic is off at t = 11)."""
    times = np.arange(1, 251, dtype=np.float64)           # a step from time t - 1 observes t
    vec = cartsim.make_vec("GaussianBandit-misc", num_envs=len(times), backend="interp", dtype=dtype)
    try:
        vec.reset(seed=0)
        vec.batch.set_state({"time": times - 1, "last_action": np.zeros(len(times), dtype=np.int32),
                             "last_reward": np.zeros(len(times)), "mu": np.full(len(times), -1.0)},
                            np.zeros(len(times), dtype=np.int32))
        obs, _, _, _, _ = vec.step(np.zeros(len(times), dtype=np.int64))
    finally:
        vec.close()
    fused = (2 * times * np.float64(np.float32(0.01)) - 1).astype(np.float32)   # exact in double, one rounding
    assert np.array_equal(obs[:, 3], fused)
    assert np.float32(np.float32(22) * np.float32(0.01)) - np.float32(1) != fused[10]   # t = 11


@pytest.mark.parametrize("env", ["bernoulli_bandit", "gaussian_bandit"])
def test_bandit_schedules_agree(env):
    """cpu at every fusion and unroll and the interpreter: one checksum."""
    from test_suite_bsuite import SCHEDULES, checksums
    sums = checksums(env)
    assert len(set(sums)) == 1, dict(zip(map(" ".join, SCHEDULES), sums))


@pytest.mark.parametrize("gym_id,options", [
    ("BernoulliBandit-misc", {}), ("BernoulliBandit-misc", {"reward_prob": 0.3, "normalize_time": False}),
    ("GaussianBandit-misc", {}), ("GaussianBandit-misc", {"mean_mu": 0.5, "sigma_l": 0.2})])
def test_bandits_through_gymnasiums_registry(gym_id, options):
    from test_suite_bsuite import check_registered
    check_registered(gym_id, options)

"""gymnax's bsuite environments against gymnax 1.0.1's own episodes
(tests/golden_suite, docs/suite.md sections 5 to 9): every step and reset record
replayed through the shipped .env files with the reference's random outcomes.
gymnax computes in float32; these environments compute only with ints, bools and
float32 values that f32 and f64 both hold exactly, so both compiles must be equal to
the bit (rtol 0), except where a section below states a tolerance."""
import json
import os

import numpy as np
import pytest

import cartsim
import golden_dist

from golden_replay import (GOLDEN, Golden, Mapping, check_replay, golden_params, load, word_for_bernoulli, word_for_randint,
                           word_for_uniform, words_for_normal)

BACKENDS = ["cpu", "interp"]
DTYPES = ["float32", "float64"]


def same_names(ref):
    """gymnax's EnvState fields are cartsim's state variables, by the same names."""
    return dict(ref)


def in_order(stem):
    """Every reset and step record of STEM, in the file's order."""
    with open(os.path.join(GOLDEN, stem + ".jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()][1:]


# ---- Catch-bsuite (section 5) ----

CATCH_COLUMNS = 5


def catch_mapping() -> Mapping:
    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]),
                   step_words=lambda r, _: [word_for_randint(r["draws"]["ball_x"], CATCH_COLUMNS)],
                   reset_words=lambda r, _: [word_for_randint(r["draws"]["ball_x"], CATCH_COLUMNS)],
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


# ---- DeepSea-bsuite (section 6), deterministic and not ----
# The reward's noise is a normal draw, which words reproduce only within an ulp or two
# (golden_replay.words_for_normal): the stochastic file's rewards are compared within
# 1e-6 relative in f32; f64 rounds the draw to float32 as gymnax's is, so it is exact.
# Everything else, and every reward of the deterministic file, is exact in both.

def deep_sea_mapping() -> Mapping:
    def step_words(r, f32):
        return words_for_normal(r["draws"]["rand_reward"], f32) + [word_for_uniform(r["draws"]["rand_trans_u"], f32)]

    def reset_words(r, f32):
        return [word_for_bernoulli(bool(b), 0.5, f32) for b in np.ravel(r["draws"]["action_mapping"])]

    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]), step_words=step_words,
                   reset_words=reset_words, obs=lambda ref: np.asarray(ref, dtype=np.float32),
                   info={"discount": float}, kept=("total_bad_episodes", "denoised_return"))


DEEP_SEA = [("DeepSea-bsuite", {}), ("DeepSea-bsuite_deterministic=False", {"deterministic": False})]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stem,params", DEEP_SEA)
def test_deep_sea_counters_survive_the_auto_reset(stem, params, backend, root):
    """gymnax's own step (same-step auto-reset) at every episode's last step: the state it
    returns is the next episode's first, with the two counters carried over. cartsim in
    same-step mode, from the last step's state and draws, must return that state whole."""
    records = in_order(stem)
    ends = [(r, records[k + 1]) for k, r in enumerate(records[:-1])
            if not r.get("reset") and r["terminated"] and records[k + 1].get("auto")]
    assert len(ends) >= 20
    n = len(ends)
    m = deep_sea_mapping()
    vec = cartsim.make_vec(root("envs/deep_sea.env"), n, backend=backend, dtype="float64", threads=1,
                           params=params, autoreset_mode="SameStep")
    try:
        batch = vec.batch
        vec.reset(seed=0)
        before = [m.state(end["state"]) for end, _ in ends]
        batch.set_state({v.name: np.array([b[v.name] for b in before]) for v in batch.state_vars},
                        np.array([end["state"]["time"] for end, _ in ends], dtype=np.int32))
        words = np.zeros((batch.n_step_draws, n), dtype=np.uint32)   # the random policy's draw stays 0
        words[:3] = np.array([m.step_words(end, False) for end, _ in ends], dtype=np.uint32).T
        batch.replay_draws(words, None)
        vec.step(np.array([end["action"] for end, _ in ends]))
        got = batch.get_state()
        for i, (end, first) in enumerate(ends):
            assert first["state"]["total_bad_episodes"] == end["next_state"]["total_bad_episodes"]
            for name, want in m.state(first["state"]).items():
                assert np.array_equal(got[name][i], np.asarray(want)), (first["episode"], name)
        assert sum(first["state"]["total_bad_episodes"] > 0 for _, first in ends) >= 5
    finally:
        vec.close()


# ---- MemoryChain-bsuite (section 7): exact in both compiles ----

def memory_chain_mapping() -> Mapping:
    def reset_words(r, f32):
        return [word_for_bernoulli(bool(b), 0.5, f32) for b in r["draws"]["context"]] + \
               [word_for_randint(r["draws"]["query"], 1)]

    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]), step_words=lambda r, _: [],
                   reset_words=reset_words, obs=lambda ref: np.asarray(ref, dtype=np.float32),
                   info={"discount": float})


# ---- UmbrellaChain-bsuite (section 8): exact in both compiles; gymnax's int32 reward
# is cartsim's real of the same value ----

def umbrella_chain_mapping() -> Mapping:
    def bits(r, names, f32):
        return [word_for_bernoulli(bool(r["draws"][name]), 0.5, f32) for name in names]

    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]),
                   step_words=lambda r, f32: bits(r, ["random_reward"], f32),
                   reset_words=lambda r, f32: bits(r, ["need_umbrella", "has_umbrella"], f32),
                   obs=lambda ref: np.asarray(ref, dtype=np.float32), info={"discount": float})


# ---- DiscountingChain-bsuite (section 9): no draws, exact in both compiles ----

def discounting_chain_mapping() -> Mapping:
    return Mapping(state=same_names, steps=lambda ref: int(ref["time"]), step_words=lambda r, _: [],
                   reset_words=lambda r, _: [], obs=lambda ref: np.asarray(ref, dtype=np.float32),
                   info={"discount": float})


# ---- every golden file: its steps and resets, each as gymnax's, on every backend and dtype ----

RUNS = [(backend, dtype) for backend in BACKENDS for dtype in DTYPES]
REPLAYS = [Golden("Catch-bsuite", "envs/catch.env", catch_mapping, 489, 56, RUNS),
           Golden("DeepSea-bsuite", "envs/deep_sea.env", deep_sea_mapping, 200, 25, RUNS, {}),
           Golden("DeepSea-bsuite_deterministic=False", "envs/deep_sea.env", deep_sea_mapping, 200, 25, RUNS,
                  {"deterministic": False}, step_rtol={"float32": 1e-6}),
           Golden("MemoryChain-bsuite", "envs/memory_chain.env", memory_chain_mapping, 726, 122, RUNS),
           Golden("UmbrellaChain-bsuite", "envs/umbrella_chain.env", umbrella_chain_mapping, 606, 62, RUNS),
           Golden("DiscountingChain-bsuite", "envs/discounting_chain.env", discounting_chain_mapping, 500, 5, RUNS)]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnaxs(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_discounting_chain_pays_each_arm_once_at_its_time(backend, dtype, root):
    """Each arm's whole episode from a reset: arm c pays rewards[c] at step reward_timestep[c]
    and nothing else, and a context of -1 set mid-episode reads the last arm (JAX's rule)."""
    vec = cartsim.make_vec(root("envs/discounting_chain.env"), 6, backend=backend, dtype=dtype, threads=1,
                           autoreset_mode="SameStep")
    try:
        vec.reset(seed=0)
        state = vec.batch.get_state()
        state["context"][5] = -1
        state["time"][5] = 1
        vec.batch.set_state({k: state[k] for k in ("time", "rewards", "context")},
                            np.array([0, 0, 0, 0, 0, 1], dtype=np.int32))
        paid = np.zeros((6, 100))
        for t in range(100):
            actions = np.array([0, 1, 2, 3, 4, 0]) if t == 0 else np.zeros(6, dtype=int)
            _, reward, terminated, truncated, _ = vec.step(actions)
            paid[:, t] = reward
            assert not terminated.any()
            assert truncated.tolist() == [t == 99] * 5 + [t == 98]   # lane 5 began at time 1
        for arm, at in enumerate([1, 3, 10, 30, 100]):
            want = np.zeros(100)
            want[at - 1] = np.float32(1.1) if arm == 0 else 1.0
            assert np.array_equal(paid[arm], want), arm
        assert paid[5].tolist().count(1.0) == 1 and paid[5][98] == 1.0   # the last arm's 100th step
    finally:
        vec.close()


# ---- cartsim's own draws against gymnax's distributions (STEM.dist.json) ----
# 10,000 environments at a fixed seed, Philox's words (nothing replayed), against the
# reference's 10,000 samples: golden_dist's two-sample chi-square, failing below P_FAIL.
# Each test also fails one comparison on purpose (a param that changes the distribution,
# or cartsim's own sample bent a little), to show that it can. DiscountingChain draws
# nothing.

SAMPLES = golden_dist.SAMPLES
sampled = golden_dist.sampled


def test_chi_square_tells_a_fair_coin_from_a_biased_one():
    fair = [5009, 4991]
    assert golden_dist.chi2_p(fair, [4930, 5070]) > golden_dist.P_FAIL
    assert golden_dist.chi2_p(fair, [5400, 4600]) < golden_dist.P_FAIL
    with pytest.raises(AssertionError, match="never had"):
        golden_dist.value_counts({"0": 5000, "1": 5000}, [0] * 5000 + [1] * 4999 + [2])


def test_catch_draws_are_gymnaxs(root):
    ref = golden_dist.load("Catch-bsuite")
    env = root("envs/catch.env")
    state, _ = sampled(env, 1)
    counts = golden_dist.value_counts(ref["reset"]["state.ball_x"]["all"], state["ball_x"])
    assert golden_dist.chi2_p(*counts) > golden_dist.P_FAIL
    # the step's column shows after prev_done (a finished episode restarts the ball)
    done = {"time": 9, "ball_x": 3, "ball_y": 9, "paddle_x": 2, "paddle_y": 9, "prev_done": True}
    state, _ = sampled(env, 2, done, 1)
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["step"]["draw.ball_x"]["all"], state["ball_x"])) \
        > golden_dist.P_FAIL
    bent = np.where((state["ball_x"] == 4) & (np.arange(SAMPLES) % 4 == 0), 0, state["ball_x"])   # a quarter of 4s: 0
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["step"]["draw.ball_x"]["all"], bent)) < golden_dist.P_FAIL


def deep_sea_state(**fields):
    state = {"time": 0, "row": 0, "column": 0, "bad_episode": False, "total_bad_episodes": 0, "denoised_return": 0,
             "optimal_return": 0.38269591331481934, "action_mapping": DEEP_SEA_MAP}
    state.update(fields)
    return state


DEEP_SEA_MAP = np.array([[0, 0, 1, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0, 0, 0],
                         [0, 0, 0, 0, 1, 1, 1, 0], [1, 0, 1, 0, 0, 1, 1, 1], [1, 1, 0, 0, 0, 1, 1, 1],
                         [0, 0, 0, 1, 1, 0, 0, 0], [1, 0, 1, 1, 1, 1, 1, 0]])


def test_deep_sea_draws_are_gymnaxs(root):
    env = root("envs/deep_sea.env")
    ref = golden_dist.load("DeepSea-bsuite_deterministic=False")
    # the reset's 8x8 map (drawn at every reset, used with sample_action_map), pooled
    state, _ = sampled(env, 3, sample_action_map=True)
    pooled = ref["reset"]["draw.action_mapping"]["pooled"]
    assert golden_dist.chi2_p(*golden_dist.value_counts(pooled, state["action_mapping"])) > golden_dist.P_FAIL
    # a 'right' from the top left corner (action 0 there) fails 1 time in 8
    column = ref["step"]["next_state.column"]["all"]
    state, _ = sampled(env, 4, deep_sea_state(), 0, deterministic=False)
    assert golden_dist.chi2_p(*golden_dist.value_counts(column, state["column"])) > golden_dist.P_FAIL
    state, _ = sampled(env, 4, deep_sea_state(), 0, deterministic=True)
    assert golden_dist.chi2_p(*golden_dist.value_counts(column, state["column"])) < golden_dist.P_FAIL
    # the normal shows as the whole reward of a 'left' (action 0) at the bottom left corner
    normal = ref["step"]["draw.rand_reward"]["all"]
    _, reward = sampled(env, 5, deep_sea_state(time=7, row=7, column=0), 0, deterministic=False)
    assert golden_dist.chi2_p(*golden_dist.histogram_counts(normal, reward)) > golden_dist.P_FAIL
    assert abs(reward.mean()) < 0.05 and abs(reward.std() - 1) < 0.03
    assert golden_dist.chi2_p(*golden_dist.histogram_counts(normal, reward * 1.1)) < golden_dist.P_FAIL


def test_memory_chain_draws_are_gymnaxs(root):
    ref = golden_dist.load("MemoryChain-bsuite")["reset"]
    state, _ = sampled(root("envs/memory_chain.env"), 6)
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["state.context"]["all"], state["context"])) \
        > golden_dist.P_FAIL
    assert (state["query"] == 0).all()
    bent = np.where(np.arange(SAMPLES) % 12 == 0, 1, state["context"][:, 0])    # 4% more ones
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["state.context"]["all"], bent)) < golden_dist.P_FAIL


def test_umbrella_chain_draws_are_gymnaxs(root):
    env = root("envs/umbrella_chain.env")
    ref = golden_dist.load("UmbrellaChain-bsuite")
    state, _ = sampled(env, 7)
    for name in ("need_umbrella", "has_umbrella"):
        counts = golden_dist.value_counts(ref["reset"]["state." + name]["all"], state[name])
        assert golden_dist.chi2_p(*counts) > golden_dist.P_FAIL, name
    assert np.corrcoef(state["need_umbrella"], state["has_umbrella"])[0, 1] < 0.05   # two draws, not one
    first = {"time": 0, "need_umbrella": 1, "has_umbrella": 0, "total_regret": 0}
    _, reward = sampled(env, 8, first, 0)
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["step"]["reward"]["all"], reward)) > golden_dist.P_FAIL
    _, reward = sampled(env, 8, dict(first, time=9), 0)            # the last step pays the umbrella, never noise
    assert golden_dist.chi2_p(*golden_dist.value_counts(ref["step"]["reward"]["all"], reward)) < golden_dist.P_FAIL


# ---- from Python, by gymnax's ids ----

BSUITE_IDS = ["Catch-bsuite", "DeepSea-bsuite", "MemoryChain-bsuite", "UmbrellaChain-bsuite",
              "DiscountingChain-bsuite"]
OBS_SHAPES = {"Catch-bsuite": (10, 5), "DeepSea-bsuite": (8, 8), "MemoryChain-bsuite": (3,),
              "UmbrellaChain-bsuite": (3,), "DiscountingChain-bsuite": (2,)}
DTYPE_OF = {"int32": np.int32, "bool": np.bool_, "float32": np.float32}


def check_by_name(gym_id: str, stem: str, params: dict):
    """make_vec by gymnax's id: its observation's shape and dtype, its state variables by
    gymnax's field names in gymnax's order, each with its dtype and shape, and set_state
    of the golden file's first step's state by name gives that state back, then the
    recorded next state."""
    meta, _, steps = load(stem)
    vec = cartsim.make_vec(gym_id, num_envs=3, backend="interp", params=params)
    try:
        obs, _ = vec.reset(seed=0)
        assert vec.single_observation_space.shape == OBS_SHAPES.get(gym_id, (4,))
        assert obs.shape == (3,) + OBS_SHAPES.get(gym_id, (4,)) and obs.dtype == np.float32
        state = vec.batch.get_state()
        assert list(state) == list(meta["state_fields"])
        for name, kind in meta["state_fields"].items():
            dtype, _, dims = kind.partition("[")
            shape = tuple(int(d) for d in dims.rstrip("]").split(",")) if dims else ()
            assert state[name].dtype == DTYPE_OF[dtype] and state[name].shape == (3,) + shape, name
        first = steps[0]
        want = {name: np.array([first["state"][name]] * 3) for name in state}
        vec.batch.set_state(want, np.zeros(3, dtype=np.int32) + int(first["state"]["time"]))
        got = vec.batch.get_state()
        for name in state:
            assert np.array_equal(got[name], want[name].astype(got[name].dtype)), name
    finally:
        vec.close()


@pytest.mark.parametrize("gym_id", BSUITE_IDS)
def test_bsuite_by_gymnax_id_and_field_names(gym_id):
    check_by_name(gym_id, gym_id, {})


def test_deep_sea_options_as_params():
    """gymnax's params.replace(deterministic=False, sample_action_map=True) as params:
    the optimal return of the stochastic chain, and a map of the reset's own draws."""
    vec = cartsim.make_vec("DeepSea-bsuite", num_envs=64, backend="interp",
                           params={"deterministic": False, "sample_action_map": True})
    try:
        vec.reset(seed=3)
        state = vec.batch.get_state()
        assert (state["optimal_return"] == np.float32(0.38269591331481934)).all()
        maps = state["action_mapping"]
        assert not (maps == DEEP_SEA_MAP).all(axis=(1, 2)).any() and len({m.tobytes() for m in maps}) == 64
    finally:
        vec.close()


# ---- pictures ----

def frame_of(gym_id: str, state: dict) -> np.ndarray:
    """The picture of one environment set to `state` (every variable by name)."""
    vec = cartsim.make_vec(gym_id, num_envs=1, backend="interp", render_mode="rgb_array")
    try:
        vec.reset(seed=0)
        vec.batch.set_state({name: np.array([value]) for name, value in state.items()},
                            np.zeros(1, dtype=np.int32))
        return np.array(vec.render()[0])
    finally:
        vec.close()


def test_catch_draws_gymnaxs_board():
    """gymnax's vis_catch: a white board of 10 rows and 5 columns, "B" on the ball's cell
    and "P" on the paddle's (here also shaded), 40 pixels a cell, row 0 on top."""
    img = frame_of("Catch-bsuite", {"time": 3, "ball_x": 1, "ball_y": 3, "paddle_x": 4, "paddle_y": 9,
                                    "prev_done": False})
    assert img.shape == (400, 200, 3)
    assert img[3 * 40 + 4, 1 * 40 + 4].tolist() == [210, 210, 210]       # the ball's cell
    assert img[9 * 40 + 4, 4 * 40 + 4].tolist() == [160, 160, 160]       # the paddle's
    assert img[5 * 40 + 20, 2 * 40 + 20].tolist() == [255, 255, 255]     # an empty cell
    assert img[5 * 40 - 1, 2 * 40 + 20].tolist() == [120, 120, 120]      # a line between rows
    for row, col in ((3, 1), (9, 4)):
        cell = img[row * 40:(row + 1) * 40, col * 40:(col + 1) * 40]
        assert (cell.sum(axis=2) < 100).sum() > 20, (row, col)           # the letter's ink


# ---- a built-in agent learns Catch ----

def test_evolution_strategies_learn_catch():
    """cartsim train --env Catch-bsuite --algo es --target 1 --seed 0 (docs/train.md): a
    linear policy catches every ball of 100 fresh episodes, gymnax-blines' return (1),
    in 17 generations of 256; the same seed gives the same run on the same backend. A
    random policy catches one ball in five (a mean return near -0.6)."""
    result = cartsim.train("Catch-bsuite", algo="es", seed=0, target=1.0, backend="cpu", threads=1)
    assert result.solved and result.eval_return == 1.0 and result.generations == 17
    vec = cartsim.make_vec("Catch-bsuite", num_envs=1000, backend="cpu", threads=1)
    try:
        random_returns = vec.batch.evaluate(episodes=1000, seed=0)
    finally:
        vec.close()
    assert random_returns.mean() < -0.3, random_returns.mean()


def test_deep_sea_draws_the_diver_and_the_treasure():
    """40 pixels a cell under a 32-pixel line of counters: the diver white on its cell,
    red once the episode is bad; the treasure gold at the bottom right."""
    state = deep_sea_state(time=2, row=2, column=3)
    img = frame_of("DeepSea-bsuite", state)
    assert img.shape == (352, 320, 3)
    assert img[32 + 2 * 40 + 20, 3 * 40 + 20].tolist() == [250, 250, 250]
    assert img[32 + 7 * 40 + 20, 7 * 40 + 20].tolist() == [240, 190, 40]
    assert img[32 + 2 * 40 + 20, 5 * 40 + 20].tolist() == [170 - 36, 215 - 34, 250 - 24]   # row 2's sea
    img = frame_of("DeepSea-bsuite", dict(state, bad_episode=True))
    assert img[32 + 2 * 40 + 20, 3 * 40 + 20].tolist() == [200, 60, 60]


@pytest.mark.parametrize("gym_id,size,before,after", [
    ("MemoryChain-bsuite", (120, 360), {"time": 0}, {"time": 3}),
    ("UmbrellaChain-bsuite", (100, 500), {"time": 0}, {"time": 3}),
    ("DiscountingChain-bsuite", (200, 500), {"time": 0, "context": -1}, {"time": 40, "context": 2})])
def test_chains_draw_their_time(gym_id, size, before, after):
    """Each chain's picture has its size, and the time (and the arm) it shows moves it."""
    _, _, steps = load(gym_id)
    state = dict(steps[0]["state"])
    a = frame_of(gym_id, dict(state, **before))
    b = frame_of(gym_id, dict(state, **after))
    assert a.shape == size + (3,) and b.shape == a.shape
    assert (a != b).any(axis=2).sum() > 200


# ---- every schedule gives the same trajectories ----

SCHEDULES = [["--backend", "cpu", "--fusion", "full", "--unroll", "1"],
             ["--backend", "cpu", "--fusion", "full", "--unroll", "4"],
             ["--backend", "cpu", "--fusion", "rules", "--unroll", "3"],
             ["--backend", "cpu", "--fusion", "none", "--unroll", "2"],
             ["--backend", "interp"]]


def checksums(env: str) -> list:
    """The command's checksum of 37 environments after 230 random steps (restarts
    included), f32, under each schedule of SCHEDULES."""
    import subprocess
    out = []
    for schedule in SCHEDULES:
        r = subprocess.run([os.environ["CARTSIM_BIN"], "--env", env, "--envs", "37", "--steps", "230", "--json"]
                           + schedule, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        out.append(json.loads(r.stdout)["checksum"])
    return out


@pytest.mark.parametrize("env", ["catch", "deep_sea", "memory_chain", "umbrella_chain", "discounting_chain"])
def test_bsuite_schedules_agree(env):
    sums = checksums(env)
    assert len(set(sums)) == 1, dict(zip(map(" ".join, SCHEDULES), sums))


# ---- Gymnasium's registry and gymnax's options as keywords ----

def check_registered(gym_id: str, options: dict):
    """gym.make_vec("cartsim/ID", **options) and gym.make("cartsim/ID", **options): the
    spaces of cartsim.make_vec(ID, params=options), and the same first steps from the
    same seed (options as keywords are the params by name)."""
    import gymnasium as gym
    vec = gym.make_vec("cartsim/" + gym_id, num_envs=4, backend="interp", **options)
    same = cartsim.make_vec(gym_id, 4, backend="interp", params=options)
    try:
        assert vec.single_observation_space == same.single_observation_space
        assert vec.single_action_space == same.single_action_space
        a, _ = vec.reset(seed=5)
        b, _ = same.reset(seed=5)
        assert np.array_equal(a, b)
        for t in range(12):
            actions = np.arange(4) % vec.single_action_space.n
            a, ra, _, _, _ = vec.step(actions)
            b, rb, _, _, _ = same.step(actions)
            assert np.array_equal(a, b) and np.array_equal(ra, rb), t
    finally:
        vec.close()
        same.close()
    env = gym.make("cartsim/" + gym_id, backend="interp", **options)
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
    finally:
        env.close()


@pytest.mark.parametrize("gym_id,options", [
    ("Catch-bsuite", {}), ("Catch-bsuite", {"max_steps_in_episode": 5}),
    ("DeepSea-bsuite", {}), ("DeepSea-bsuite", {"deterministic": False, "sample_action_map": True}),
    ("MemoryChain-bsuite", {"memory_length": 3}), ("UmbrellaChain-bsuite", {"chain_length": 4}),
    ("DiscountingChain-bsuite", {"mapping_seed": 3})])
def test_bsuite_through_gymnasiums_registry(gym_id, options):
    check_registered(gym_id, options)


def test_bsuite_options_change_the_environment():
    """gymnax's options as keywords take effect: the stochastic chain's optimal return, a
    shorter memory, a shorter umbrella chain, the optimal arm moved."""
    def first_state(gym_id, **options):
        vec = cartsim.make_vec(gym_id, 2, backend="interp", **options)
        try:
            vec.reset(seed=0)
            return vec.batch.get_state()
        finally:
            vec.close()
    state = first_state("DeepSea-bsuite", deterministic=False)
    assert state["optimal_return"][0] == np.float32(0.38269591331481934)
    state = first_state("DiscountingChain-bsuite", mapping_seed=3)
    assert state["rewards"][0].tolist() == [1, 1, 1, np.float32(1.1), 1]
    vec = cartsim.make_vec("MemoryChain-bsuite", 1, backend="interp", memory_length=3)
    try:
        vec.reset(seed=0)
        ends = [vec.step(np.zeros(1, dtype=np.int64))[2][0] for _ in range(4)]
    finally:
        vec.close()
    assert ends == [False, False, False, True]                 # memory_length + 1 steps
    with pytest.raises(TypeError, match="determinstic"):
        cartsim.make_vec("DeepSea-bsuite", 2, determinstic=False)

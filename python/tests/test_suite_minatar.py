"""gymnax's MinAtar (Breakout, Freeway, Asterix, SpaceInvaders) against gymnax 1.0.1's own
episodes (tests/golden_suite, docs/suite.md sections 10-13): every step and reset
replayed with the reference's random outcomes, exact in float32 and float64 (MinAtar
computes with ints, bools and 0/1 maps only)."""
import numpy as np
import pytest

import golden_dist
from golden_replay import Golden, Mapping, check_replay, golden_params, word_for_bernoulli, word_for_randint

BACKENDS = ["interp", "cpu"]
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


# ---- Freeway-MinAtar: 8 speeds and 8 directions at every reset and step ----

def _car_words(draws):
    return ([word_for_randint(s - 1, 5) for s in draws["speeds"]] +
            [word_for_randint(1 if d == 1 else 0, 2) for d in draws["directions"]])


def freeway_mapping(meta):
    return minatar_mapping(meta, lambda record, f32: _car_words(record["draws"]),
                           lambda record, f32: _car_words(record["draws"]))


# ---- Asterix-MinAtar: a side, gold or not, and an order of the 8 slots at every step ----

def fisher_yates_draws(order):
    """The draws r_j in [0, 8 - j), j = 0..6, with which asterix.env's shuffle (swap
    elements j and j + r_j, in turn) makes the permutation `order` from 0..7."""
    items, draws = list(range(8)), []
    for j in range(7):
        r = items.index(order[j], j)
        draws.append(r - j)
        items[j], items[r] = items[r], items[j]
    assert items == list(order)
    return draws


def asterix_mapping(meta):
    def step_words(record, f32):
        d = record["draws"]
        return ([word_for_randint(0 if d["lr"] == 1 else 1, 2), word_for_bernoulli(d["is_gold"] == 1, 1.0 / 3.0, f32)]
                + [word_for_randint(r, 8 - j) for j, r in enumerate(fisher_yates_draws(d["slot_order"]))])
    return minatar_mapping(meta, step_words, lambda record, f32: [])


# ---- SpaceInvaders-MinAtar: no draws; an int32 discount ----

def space_invaders_mapping(meta):
    m = minatar_mapping(meta, lambda record, f32: [], lambda record, f32: [])
    m.info = {"discount": int}
    return m


# ---- every golden file: its steps and resets, each as gymnax's, on every backend and dtype
# (the records each holds, at least) ----

RUNS = [(backend, dtype) for backend in BACKENDS for dtype in DTYPES]


def _minatar(stem: str, env: str, mapping, steps: int, resets: int) -> Golden:
    return Golden(stem, env, lambda: mapping(_meta(stem)), steps, resets, RUNS, exact=False)


REPLAYS = [_minatar("Breakout-MinAtar", "envs/breakout.env", breakout_mapping, 151, 11),
           _minatar("Freeway-MinAtar", "envs/freeway.env", freeway_mapping, 101, 10),
           _minatar("Asterix-MinAtar", "envs/asterix.env", asterix_mapping, 141, 10),
           _minatar("SpaceInvaders-MinAtar", "envs/space_invaders.env", space_invaders_mapping, 61, 10)]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnax(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)


# ---- cartsim's own draws against the reference's distributions (STEM.dist.json) ----

def follows(ref_counts: dict, values) -> bool:
    """cartsim's draws (values) against the reference's counts, by golden_dist's one rule."""
    return golden_dist.chi2_p(*golden_dist.value_counts(ref_counts, values)) > golden_dist.P_FAIL


def _reset_states(env, n, seed=7, backend="interp"):
    import cartsim
    vec = cartsim.make_vec(env, n, backend=backend, threads=1)
    try:
        vec.reset(seed=seed)
        return vec.batch.get_state()
    finally:
        vec.close()


def test_breakout_reset_draws_follow_gymnax(root):
    ref = golden_dist.load("Breakout-MinAtar")["reset"]
    n = ref_n = sum(ref["state.ball_x"]["all"].values())
    state = _reset_states(root("envs/breakout.env"), n)
    for field in ("ball_x", "ball_dir", "last_x"):
        assert follows(ref["state." + field]["all"], state[field]), field
    assert not follows(ref["state.ball_dir"]["all"], np.full(n, 2)), "the rule tells a constant from a coin"
    assert ref_n == 10000
    assert np.all(state["ball_y"] == 3) and np.all(state["pos"] == 4) and np.all(state["time"] == 0)


# ---- from Python: the shipped environment by its id, its state by name ----

def test_breakout_from_python():
    import cartsim
    vec = cartsim.make_vec("Breakout-MinAtar", num_envs=3, backend="interp")
    try:
        obs, info = vec.reset(seed=3)
        assert obs.shape == (3, 10, 10, 4) and obs.dtype == np.float32
        assert vec.single_action_space.n == 3
        state = vec.batch.get_state()
        assert list(state) == ["time", "ball_y", "ball_x", "ball_dir", "pos", "brick_map", "strike", "last_y",
                               "last_x", "terminal"]
        assert state["brick_map"].shape == (3, 10, 10) and state["brick_map"].dtype == np.float32
        assert state["strike"].dtype == np.bool_ and state["pos"].dtype == np.int32
        # a wall with one brick left, under a ball about to strike it from below
        state["brick_map"][:] = 0.0
        state["brick_map"][:, 2, 5] = 1.0
        state["ball_y"][:], state["ball_x"][:], state["ball_dir"][:] = 3, 4, 1
        # by name: a plain dict (a State passed back as it is sets its flat doubles, not
        # the named arrays edited here)
        vec.batch.set_state(dict(state))
        obs, reward, terminated, truncated, info = vec.step(np.zeros(3, dtype=np.int64))
        after = vec.batch.get_state()
        assert np.all(reward == 1.0) and not terminated.any()
        assert np.all(after["brick_map"] == 0.0) and np.all(after["strike"])
        assert np.all(after["ball_dir"] == 2) and np.all(after["ball_y"] == 3)
        assert np.all(obs[:, 3, 5, 1] == 1.0) and np.all(obs[:, :, :, 3] == 0.0)
    finally:
        vec.close()


def _freeway_speed_draws_follow(ref, speeds):
    """Each car's |speed| and sign (speeds: [n][8] signed) against the reference's draws."""
    for i in range(8):
        assert follows(ref["draw.speeds"]["[%d]" % i], np.abs(speeds[:, i])), ("speed", i)
        assert follows(ref["draw.directions"]["[%d]" % i], np.sign(speeds[:, i])), ("direction", i)


def test_freeway_reset_draws_follow_gymnax(root):
    ref = golden_dist.load("Freeway-MinAtar")["reset"]
    state = _reset_states(root("envs/freeway.env"), 10000)
    _freeway_speed_draws_follow(ref, state["cars"][:, :, 3])
    assert np.all(state["cars"][:, :, 2] == np.abs(state["cars"][:, :, 3]))


def test_freeway_step_draws_follow_gymnax(root):
    """The step's draws show on a crossing: the chicken one row from the top moves up."""
    import cartsim
    ref = golden_dist.load("Freeway-MinAtar")["step"]
    n = 10000
    vec = cartsim.make_vec(root("envs/freeway.env"), n, backend="interp", threads=1)
    try:
        vec.reset(seed=11)
        state = dict(vec.batch.get_state())
        state["pos"][:], state["move_timer"][:] = 1, 0
        vec.batch.set_state(state)
        _, reward, _, _, _ = vec.step(np.ones(n, dtype=np.int64))
        assert np.all(reward == 1.0)
        _freeway_speed_draws_follow(ref, vec.batch.get_state()["cars"][:, :, 3])
    finally:
        vec.close()


def _asterix_spawn(env, n, entities, seed):
    """One step of n Asterix environments at a spawn, the entities set to `entities` and
    nothing moving; the entities after it."""
    import cartsim
    vec = cartsim.make_vec(env, n, backend="interp", threads=1)
    try:
        vec.reset(seed=seed)
        state = dict(vec.batch.get_state())
        state["spawn_timer"][:], state["move_timer"][:] = 0, 3
        state["entities"][:] = entities
        vec.batch.set_state(state)
        vec.step(np.zeros(n, dtype=np.int64))
        return vec.batch.get_state()["entities"]
    finally:
        vec.close()


def test_asterix_step_draws_follow_gymnax(root):
    """A spawn into empty slots shows the side, the gold and order[1] (the first slot read)."""
    ref = golden_dist.load("Asterix-MinAtar")["step"]
    after = _asterix_spawn(root("envs/asterix.env"), 10000, np.zeros((8, 5), dtype=np.int32), seed=5)
    filled = after[:, :, 4] == 1
    assert np.all(filled.sum(axis=1) == 1)
    slot = filled.argmax(axis=1)
    rows = after[np.arange(len(slot)), slot]
    assert follows(ref["draw.slot_order"]["[1]"], slot)
    assert follows(ref["draw.lr"]["all"], rows[:, 2])
    assert follows(ref["draw.is_gold"]["all"], rows[:, 3])
    assert np.all(rows[:, 0] == (1 - rows[:, 2]) * 9) and np.all(rows[:, 1] == slot + 1)


def test_asterix_slot_search_fails_as_gymnax(root):
    """With one free slot (3) the search misses it when the order puts it first (order[0]
    is never read): about 1 spawn in 8 then overwrites a filled slot with an unfilled row."""
    ref = golden_dist.load("Asterix-MinAtar")["step"]["draw.slot_order"]["[0]"]
    entities = np.array([[0, i + 1, 1, 0, 1] for i in range(8)], dtype=np.int32)
    entities[:, 0] = 9 - 0      # all at the right edge, far from the player
    entities[3] = 0
    after = _asterix_spawn(root("envs/asterix.env"), 10000, entities, seed=6)
    missed = after[:, 3, 4] == 0
    want = [ref["3"], sum(ref.values()) - ref["3"]]
    got = [int(missed.sum()), int((~missed).sum())]
    assert golden_dist.chi2_p(want, got) > golden_dist.P_FAIL, (want, got)
    assert np.all((after[:, :, 4] == 0).sum(axis=1)[missed] == 2)


# ---- bench/ref_breakout.c: the hand-written loop computes cartsim's rollout ----

def test_ref_breakout_has_cartsims_checksum(tmp_path):
    """The hand-written reference of the benchmark and cartsim's shipped Breakout
    (cpu backend, one thread) roll out the same trajectories: equal episodes,
    returns and checksum (cartsim's own definition, recomputed by the reference)."""
    import json
    import os
    import subprocess
    from golden_replay import ROOT
    binary = str(tmp_path / "ref_breakout")
    subprocess.run(["cc", "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                    "-I" + os.path.join(ROOT, "jit"), os.path.join(ROOT, "bench", "ref_breakout.c"), "-lm", "-o",
                    binary], check=True)
    cartsim_bin = os.environ.get("CARTSIM_BIN", os.path.join(ROOT, "build", "cartsim"))
    for envs, steps, seed in ((300, 1500, 0), (37, 2200, 12345)):
        args = ["--envs", str(envs), "--steps", str(steps), "--seed", str(seed)]
        ref = json.loads(subprocess.run([binary] + args, check=True, capture_output=True, text=True).stdout)
        ours = json.loads(subprocess.run([cartsim_bin, "--env", "Breakout-MinAtar", "--backend", "cpu", "--threads",
                                          "1", "--json"] + args, check=True, capture_output=True, text=True).stdout)
        assert ref["episodes"] == ours["episodes"] > 0
        assert ref["checksum"] == ours["checksum"]
        assert abs(ref["mean_return"] - ours["mean_return"]) <= 1e-12 * abs(ours["mean_return"])


# ---- pictures: MinAtar's coloured channels through grid(...) ----

CUBEHELIX = {4: [(22, 61, 78), (84, 121, 47), (208, 126, 147), (193, 202, 243)],
             6: [(26, 36, 66), (27, 97, 69), (106, 123, 48), (199, 123, 123), (205, 163, 225), (198, 225, 241)],
             7: [(27, 29, 59), (22, 83, 76), (67, 119, 49), (160, 121, 73), (212, 131, 167), (199, 179, 237),
                 (202, 231, 240)]}


def _cubehelix(n):
    """seaborn's color_palette("cubehelix", n): matplotlib's cubehelix map (gamma 1, s 0.5,
    r -1.5, h 1) at the n inner points of n + 1 equal steps, as 0-255 integers."""
    import math
    out = []
    for i in range(n):
        x = (i + 1) / (n + 1)
        phi = 2 * math.pi * (0.5 / 3 - 1.5 * x)
        a = x * (1 - x) / 2
        rgb = (x + a * (-0.14861 * math.cos(phi) + 1.78277 * math.sin(phi)),
               x + a * (-0.29227 * math.cos(phi) - 0.90649 * math.sin(phi)),
               x + a * (1.97294 * math.cos(phi)))
        out.append(tuple(int(round(255 * min(max(v, 0.0), 1.0))) for v in rgb))
    return out


def test_the_palettes_are_cubehelix():
    for n, colours in CUBEHELIX.items():
        assert _cubehelix(n) == colours


@pytest.mark.parametrize("env", ["breakout", "freeway", "asterix", "space_invaders"])
def test_minatar_pictures_colour_each_cell_by_its_highest_channel(env, root):
    """Frames of 160 x 160 pixels, 16 per cell, over 30 random steps of 3 environments:
    each cell's centre in the colour of its observation's highest active channel,
    black where none is; four colours at least show up."""
    import cartsim
    vec = cartsim.make_vec(root("envs/%s.env" % env), 3, backend="interp", render_mode="rgb_array")
    try:
        obs, _ = vec.reset(seed=4)
        n = obs.shape[-1]
        palette = np.array([(0, 0, 0)] + CUBEHELIX[n], dtype=np.uint8)
        rng = np.random.default_rng(4)
        seen = set()
        for _ in range(30):
            obs, *_ = vec.step(rng.integers(0, vec.single_action_space.n, 3))
            frames = vec.render()
            for lane in range(3):
                frame = np.asarray(frames[lane])
                assert frame.shape == (160, 160, 3)
                top = np.max(obs[lane] * np.arange(1, n + 1), axis=2).astype(int)
                assert np.array_equal(frame[8::16, 8::16], palette[top]), (env, lane)
                seen |= set(np.unique(top).tolist())
        assert len(seen) >= 5, seen
    finally:
        vec.close()


# ---- gymnax's params as cartsim's ----

@pytest.mark.parametrize("env,params,want", [
    ("freeway", {"player_speed": 1}, {"move_timer": 1}),
    ("asterix", {"init_spawn_speed": 3, "init_move_interval": 2, "ramp_interval": 7},
     {"spawn_speed": 3, "spawn_timer": 3, "move_speed": 2, "move_timer": 2, "ramp_timer": 7}),
    ("space_invaders", {"start_move_interval": 9, "enemy_shot_interval": 4},
     {"enemy_move_interval": 9, "alien_move_timer": 9, "alien_shot_timer": 4})])
def test_minatar_params_reach_the_reset(env, params, want, root):
    import cartsim
    vec = cartsim.make_vec(root("envs/%s.env" % env), 2, backend="interp", params=params)
    try:
        vec.reset(seed=0)
        state = vec.batch.get_state()
        for name, value in want.items():
            assert np.all(state[name] == value), name
    finally:
        vec.close()


def test_asterix_without_ramping_keeps_its_speeds(root):
    """ramping=False: the ramp timer rests at ramp_interval and the speeds never change."""
    import cartsim
    vec = cartsim.make_vec(root("envs/asterix.env"), 2, backend="interp", params={"ramping": False})
    try:
        vec.reset(seed=0)
        state = dict(vec.batch.get_state())
        state["ramp_timer"][:] = -1            # a ramp is due on this step when ramping is on
        vec.batch.set_state(state)
        vec.step(np.zeros(2, dtype=np.int64))
        after = vec.batch.get_state()
        assert np.all(after["ramp_timer"] == 100) and np.all(after["ramp_index"] == 0)
        assert np.all(after["spawn_speed"] == 10) and np.all(after["move_speed"] == 5)
    finally:
        vec.close()


# ---- every game by its id from Python ----

@pytest.mark.parametrize("gym_id,channels,actions,fields", [
    ("Breakout-MinAtar", 4, 3, 10), ("Freeway-MinAtar", 7, 3, 5), ("Asterix-MinAtar", 4, 5, 12),
    ("SpaceInvaders-MinAtar", 6, 4, 13)])
def test_minatar_by_id_from_python(gym_id, channels, actions, fields):
    """make_vec by gymnax's id: float32 (10, 10, C) observations in [0, 1], gymnax's action
    count, every EnvState field by name (check_env: test_suite_check_env.py);
    gym.make_vec("cartsim/<id>") makes it too."""
    import cartsim
    vec = cartsim.make_vec(gym_id, num_envs=2, backend="interp")
    try:
        obs, _ = vec.reset(seed=1)
        assert obs.shape == (2, 10, 10, channels) and obs.dtype == np.float32
        assert vec.single_observation_space.shape == (10, 10, channels)
        assert float(vec.single_observation_space.low.min()) == 0.0
        assert float(vec.single_observation_space.high.max()) == 1.0
        assert vec.single_action_space.n == actions
        state = vec.batch.get_state()
        assert len(state) == fields and list(state)[0] == "time"
    finally:
        vec.close()
    import gymnasium as gym
    registered = gym.make_vec("cartsim/" + gym_id, num_envs=2, backend="interp")
    try:
        assert registered.single_observation_space.shape == (10, 10, channels)
        obs, _ = registered.reset(seed=2)
        assert obs.shape == (2, 10, 10, channels)
    finally:
        registered.close()

"""gymnax's misc environments (FourRooms-misc, MetaMaze-misc, PointRobot-misc) against
gymnax 1.0.1's own episodes (tests/golden_suite, docs/suite.md sections 14-16): every
golden step and reset replayed with the reference's random outcomes through the shipped
kernel on both backends, cartsim's own draws against the reference's distributions, the
Python API, the pictures, and PPO learning FourRooms."""
import math

import gymnasium
import numpy as np
import pytest

import cartsim
import golden_dist
from golden_replay import Golden, Mapping, check_replay, golden_params, word_for_randint, word_for_uniform

BACKENDS = ["cpu", "interp"]


# ---- FourRooms-misc (section 14) ----

def four_rooms_mapping() -> Mapping:
    def state(ref):
        return {"time": int(ref["time"]), "pos": np.array(ref["pos"], dtype=np.int32),
                "goal": np.array(ref["goal"], dtype=np.int32)}

    def step_words(record, f32):
        d = record["draws"]
        return [word_for_uniform(d["random_u"], f32), word_for_randint(d["random_action"], 4)]

    def reset_words(record, f32):
        d = record["draws"]
        return [word_for_randint(d["goal_index"], 104), word_for_randint(d["pos_index"], 103)]

    return Mapping(state=state, steps=lambda ref: int(ref["time"]), step_words=step_words,
                   reset_words=reset_words, obs=lambda ref: np.array(ref, dtype=np.float32),
                   info={"discount": float})


# ---- MetaMaze-misc (section 15) ----

def meta_maze_mapping() -> Mapping:
    def state(ref):
        return {"time": float(ref["time"]), "last_action": int(ref["last_action"]),
                "last_reward": float(ref["last_reward"]), "pos": np.array(ref["pos"], dtype=np.int32),
                "goal": np.array(ref["goal"], dtype=np.int32)}

    return Mapping(state=state, steps=lambda ref: int(ref["time"]),
                   step_words=lambda record, f32: [word_for_randint(record["draws"]["pos_index"], 65)],
                   reset_words=lambda record, f32: [word_for_randint(record["draws"]["goal_index"], 65)],
                   obs=lambda ref: np.array(ref, dtype=np.float64), info={"discount": float})


def xla_time_normalization(t: int) -> float:
    """gymnax's time_normalization(t) as XLA computes it in float32: fma(2 t, float32(0.01), -1),
    rounded once (the double below is exact: 2 t times a 24-bit significand, minus 1)."""
    return float(np.float32(2.0 * t * float(np.float32(0.01)) - 1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_meta_maze_normalized_time_is_xlas(backend, root):
    """normalize_time=True (no golden file has it): the observation's last element is XLA's
    fused value at every time, the language's fma (at t = 11 plain float32 gives -0.78,
    XLA -0.78000003)."""
    times = np.arange(0, 300, dtype=np.float64)
    vec = cartsim.make_vec(root("envs/meta_maze.env"), len(times), backend=backend, dtype="float32", threads=1,
                           params={"normalize_time": True, "max_steps_in_episode": 1000})
    try:
        vec.reset(seed=0)
        reset_state = vec.batch.get_state()
        state = {v.name: reset_state[v.name] for v in vec.batch.state_vars}
        state["time"] = times - 1.0                  # a step later, the observed time is t
        vec.batch.set_state(state, np.zeros(len(times), dtype=np.int32))
        obs = vec.step(np.zeros(len(times), dtype=np.int64))[0]
        got = obs[:, -1]
        want = np.array([xla_time_normalization(int(t)) for t in times])
        assert np.array_equal(got, want)
        assert got[11] == np.float32(-0.78000003)
    finally:
        vec.close()


# ---- PointRobot-misc (section 16) ----

PI32 = float(np.float32(np.pi))
XLA_TRIG_RTOL = 1e-6       # XLA's float32 cos and sin against cartsim's (docs/suite.md, section 0.2, rule 3)


def word_for_uniform_times(value: float, scale32: float, f32: bool) -> int:
    """The word whose uniform u gives `value` as jax's uniform(k, 0, scale) does in float32,
    f32(f * scale) with f on jax's 2^-23 grid: that f, found from the value (cartsim's
    uniform(0, scale) is then the same product, rounded the same way in an f32 compile)."""
    k = round(value / scale32 * 2 ** 23)
    for f in (k, k - 1, k + 1):
        if float(np.float32(f / 2 ** 23 * scale32)) == value:
            return word_for_uniform(f / 2 ** 23, f32)
    raise AssertionError("%r is not a float32 uniform of [0, %r)" % (value, scale32))


def point_robot_mapping() -> Mapping:
    def state(ref):
        return {"time": float(ref["time"]), "last_action": np.array(ref["last_action"], dtype=np.float64),
                "last_reward": float(ref["last_reward"]), "pos": np.array(ref["pos"], dtype=np.float64),
                "goal": np.array(ref["goal"], dtype=np.float64), "goals_reached": int(ref["goals_reached"])}

    def step_words(record, f32):
        d = record["draws"]
        return [word_for_uniform(d["pos_radius"], f32), word_for_uniform_times(d["pos_angle"], PI32, f32)]

    def reset_words(record, f32):
        d = record["draws"]
        return [word_for_uniform_times(d["goal_angle"], PI32, f32), word_for_uniform(d["pos_radius"], f32),
                word_for_uniform_times(d["pos_angle"], PI32, f32)]

    return Mapping(state=state, steps=lambda ref: int(ref["time"]), step_words=step_words, reset_words=reset_words,
                   obs=lambda ref: np.array(ref, dtype=np.float64), info={"discount": float})


# ---- every golden file: its steps and resets, each as gymnax's ----
# PointRobot in f32: its steps bit for bit (the 27 restarts' cos and sin happen to be
# XLA's too), its resets within XLA_TRIG_RTOL (one goal's sin, episode 2, is XLA's float32
# sin, 1 ulp from cartsim's). In f64 cartsim does not round to float32 after each
# operation as gymnax does: every step within 1e-6 relative, every reset within 1e-5 (an
# angle drawn as pi times u in f64 rather than float32 moves the sine of an angle near pi
# by some 1e-6 relative); test_point_robot_in_f64_is_gymnax_within_float32s_rounding.

RUNS = [(backend, dtype) for backend in BACKENDS for dtype in ("float64", "float32")]
POINT_ROBOT = Golden("PointRobot-misc", "envs/point_robot.env", point_robot_mapping, 260, 7,
                     [(backend, "float32") for backend in BACKENDS], step_rtol={"float64": 1e-6},
                     reset_rtol={"float32": XLA_TRIG_RTOL, "float64": 1e-5})
REPLAYS = [Golden("FourRooms-misc", "envs/four_rooms.env", four_rooms_mapping, 831, 24, RUNS),
           Golden("MetaMaze-misc", "envs/meta_maze.env", meta_maze_mapping, 504, 12, RUNS),
           POINT_ROBOT]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnax(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_point_robot_in_f64_is_gymnax_within_float32s_rounding(backend):
    check_replay(POINT_ROBOT, "steps", backend, "float64")
    check_replay(POINT_ROBOT, "resets", backend, "float64")


# ---- cartsim's own draws against the references' distributions (STEM.dist.json) ----
#
# Two-sample chi-square tests at fixed seeds: cartsim's outcomes over SAMPLES environments
# (its own Philox draws, nothing replayed) against the reference's counts of 10,000
# samples. The threshold is generous (p below 1e-6 fails); each test also shows that a
# wrong distribution (a param changed a little) is rejected, so that it can fail.


SAMPLES = 10000
P_FAIL = 1e-6


def chi2_p(ref_counts, got_counts) -> float:
    """p-value of the two-sample chi-square test that both count vectors come from one
    distribution (bins empty in both are left out), by Wilson and Hilferty's cube-root
    normal approximation of the chi-square tail."""
    a, b = np.asarray(ref_counts, dtype=np.float64), np.asarray(got_counts, dtype=np.float64)
    keep = a + b > 0
    a, b = a[keep], b[keep]
    ka, kb = math.sqrt(b.sum() / a.sum()), math.sqrt(a.sum() / b.sum())
    stat = float(np.sum((ka * a - kb * b) ** 2 / (a + b)))
    dof = len(a) - 1
    if dof < 1:
        return 1.0
    z = ((stat / dof) ** (1.0 / 3.0) - (1.0 - 2.0 / (9.0 * dof))) / math.sqrt(2.0 / (9.0 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def value_counts(ref: dict, values) -> tuple:
    """(the reference's counts, cartsim's) over the reference's outcomes {value: count}; a
    value of cartsim's the reference never saw gets a bin of its own."""
    keys = sorted(ref, key=float)
    got = {k: 0 for k in keys}
    other = 0
    for v in np.asarray(values).ravel():
        k = next((k for k in keys if float(k) == float(v)), None)
        if k is None:
            other += 1
        else:
            got[k] += 1
    return [ref[k] for k in keys] + [0], [got[k] for k in keys] + [other]


def histogram_counts(ref: dict, values) -> tuple:
    """(the reference's counts, cartsim's) over the reference's 20 bins, the values past its
    ends counted in the end bins (its edges are its own sample's min and max)."""
    edges = np.asarray(ref["edges"])
    index = np.clip(np.searchsorted(edges, np.asarray(values).ravel(), side="right") - 1, 0, len(edges) - 2)
    return ref["counts"], np.bincount(index, minlength=len(edges) - 1)


def make(env: str, n: int, dtype: str = "float32", **params):
    return cartsim.make_vec(env, n, backend="interp", dtype=dtype, threads=1, params=params)


def cell_index(cells, coords) -> np.ndarray:
    """The index in coords of each [row, col]."""
    lookup = {tuple(c): i for i, c in enumerate(coords)}
    return np.array([lookup[tuple(int(x) for x in c)] for c in cells])


def four_rooms_coords():
    env_map = np.array([[0 if ch == "x" else 1 for ch in row] for row in FOUR_ROOMS_MAP])
    return [[y, x] for y in range(13) for x in range(13) if env_map[y, x]]


FOUR_ROOMS_MAP = ["xxxxxxxxxxxxx", "x     x     x", "x     x     x", "x           x", "x     x     x",
                  "x     x     x", "xx xxxx     x", "x     xxx xxx", "x     x     x", "x     x     x",
                  "x           x", "x     x     x", "xxxxxxxxxxxxx"]


def four_rooms_step_p(root, seed, **params) -> list:
    """p-values of the first step's row and column from the first reset state, action 0 (up)."""
    ref = golden_dist.load("FourRooms-misc")["step"]["next_state.pos"]
    vec = make(root("envs/four_rooms.env"), SAMPLES, **params)
    try:
        vec.reset(seed=seed)
        vec.step(np.zeros(SAMPLES, dtype=np.int64))
        pos = vec.batch.get_state()["pos"]
        return [chi2_p(*value_counts(ref["[%d]" % axis], pos[:, axis])) for axis in (0, 1)]
    finally:
        vec.close()


def test_four_rooms_step_draws_are_gymnaxs(root):
    assert min(four_rooms_step_p(root, 11)) > P_FAIL
    assert min(four_rooms_step_p(root, 11, fail_prob=0.4)) < P_FAIL        # 8/15 astray, not 4/9


def four_rooms_reset_p(root, seed, **params) -> list:
    """p-values of the resampled goal (resample_goal_pos) and start (resample_init_pos, the
    goal fixed at [8, 9]) against the reference's goal_index and pos_index draws."""
    ref = golden_dist.load("FourRooms-misc")["reset"]
    coords = four_rooms_coords()
    out = []
    vec = make(root("envs/four_rooms.env"), SAMPLES, resample_goal_pos=True, **params)
    try:
        vec.reset(seed=seed)
        goals = cell_index(vec.batch.get_state()["goal"], coords)
    finally:
        vec.close()
    want = [ref["draw.goal_index"]["all"][str(i)] for i in range(104)]
    out.append(chi2_p(want, np.bincount(goals, minlength=104)))
    vec = make(root("envs/four_rooms.env"), SAMPLES, resample_init_pos=True, **params)
    try:
        vec.reset(seed=seed + 1)
        starts = cell_index(vec.batch.get_state()["pos"], coords)
    finally:
        vec.close()
    goal = coords.index([8, 9])
    assert not np.any(starts == goal)              # never on the goal (a chi-square misses 1/104 there)
    want = [ref["draw.pos_index"]["all"][str(i)] for i in range(103)] + [0]
    want[103], want[goal] = want[goal], 0          # the goal's own index becomes the last cell
    out.append(chi2_p(want, np.bincount(starts, minlength=104)))
    return out


def test_four_rooms_reset_draws_are_gymnaxs(root):
    p = four_rooms_reset_p(root, 21)
    assert min(p) > P_FAIL, p
    # with the goal resampled too, a start is uniform over the cells other than ITS goal,
    # so [8, 9] may be a start: the fixed-goal counts above reject that
    vec = make(root("envs/four_rooms.env"), SAMPLES, resample_init_pos=True, resample_goal_pos=True)
    try:
        vec.reset(seed=23)
        state = vec.batch.get_state()
        assert not np.any(np.all(state["pos"] == state["goal"], axis=1))
        assert np.any(np.all(state["pos"] == [8, 9], axis=1))
    finally:
        vec.close()


META_MAZE_COORDS = [[r, c] for r in range(1, 10) for c in range(1, 10) if r % 2 == 1 or c % 2 == 1]


def test_meta_maze_draws_are_gymnaxs(root):
    """The reset's goal against goal_index; a step that reaches the goal (from next to it)
    moves the agent to a cell drawn as pos_index."""
    ref = golden_dist.load("MetaMaze-misc")
    vec = make(root("envs/meta_maze.env"), SAMPLES)
    try:
        vec.reset(seed=31)
        state = vec.batch.get_state()
        goals = cell_index(state["goal"], META_MAZE_COORDS)
        want = [ref["reset"]["draw.goal_index"]["all"][str(i)] for i in range(65)]
        assert chi2_p(want, np.bincount(goals, minlength=65)) > P_FAIL
        placed = {v.name: state[v.name] for v in vec.batch.state_vars}
        placed["goal"] = np.tile([1, 1], (SAMPLES, 1))
        placed["pos"] = np.tile([1, 2], (SAMPLES, 1))
        vec.batch.set_state(placed, np.zeros(SAMPLES, dtype=np.int32))
        _, reward, _, _, _ = vec.step(np.full(SAMPLES, 3, dtype=np.int64))       # left, onto the goal
        assert np.all(reward == 10.0)
        cells = cell_index(vec.batch.get_state()["pos"], META_MAZE_COORDS)
        want = [ref["step"]["draw.pos_index"]["all"][str(i)] for i in range(65)]
        counts = np.bincount(cells, minlength=65)
        assert chi2_p(want, counts) > P_FAIL
        # a restart that avoided the goal's own cell (a 1/65 chance in gymnax) is rejected
        assert chi2_p(want, np.concatenate([[0], counts[1:] + counts[0] // 64])) < P_FAIL
    finally:
        vec.close()


def point_robot_reset_p(root, seed, **params) -> list:
    ref = golden_dist.load("PointRobot-misc")["reset"]
    vec = make(root("envs/point_robot.env"), SAMPLES, **params)
    try:
        vec.reset(seed=seed)
        state = vec.batch.get_state()
        return [chi2_p(*histogram_counts(ref["state.%s" % name]["[%d]" % axis], state[name][:, axis]))
                for name in ("pos", "goal") for axis in (0, 1)]
    finally:
        vec.close()


def point_robot_restart_p(root, seed, **params) -> list:
    """A step standing on the goal restarts the robot: its radius and angle against the
    reference's step draws pos_radius and pos_angle."""
    ref = golden_dist.load("PointRobot-misc")["step"]
    vec = make(root("envs/point_robot.env"), SAMPLES, **params)
    try:
        vec.reset(seed=seed)
        state = vec.batch.get_state()
        placed = {v.name: state[v.name] for v in vec.batch.state_vars}
        placed["pos"] = placed["goal"]
        vec.batch.set_state(placed, np.zeros(SAMPLES, dtype=np.int32))
        _, reward, _, _, _ = vec.step(np.zeros((SAMPLES, 2)))
        assert np.all(reward == 1.0)
        pos = vec.batch.get_state()["pos"].astype(np.float64)
        radius = np.hypot(pos[:, 0], pos[:, 1])
        angle = np.arctan2(pos[:, 1], pos[:, 0])
        return [chi2_p(*histogram_counts(ref["draw.pos_radius"]["all"], radius)),
                chi2_p(*histogram_counts(ref["draw.pos_angle"]["all"], angle))]
    finally:
        vec.close()


def test_point_robot_draws_are_gymnaxs(root):
    p = point_robot_reset_p(root, 41) + point_robot_restart_p(root, 43)
    assert min(p) > P_FAIL, p
    assert min(point_robot_reset_p(root, 41, circle_radius=0.9)) < P_FAIL
    assert min(point_robot_restart_p(root, 43, circle_radius=0.9)) < P_FAIL


# ---- the Python API: by id, with params, state by name ----


MISC = [("FourRooms-misc", {"fail_prob": 0.5}), ("MetaMaze-misc", {"goal_reward": 5.0}),
        ("PointRobot-misc", {"goal_radius": 0.3})]


@pytest.mark.parametrize("gym_id,params", MISC)
def test_misc_by_id_with_params(gym_id, params):
    vec = cartsim.make_vec(gym_id, num_envs=4, backend="interp", params=params)
    try:
        obs, info = vec.reset(seed=5)
        assert obs.shape[0] == 4 and obs.dtype == np.float32 and np.all(info["discount"] == 1.0)
        state = vec.batch.get_state()
        again = {v.name: state[v.name] for v in vec.batch.state_vars}
        vec.batch.set_state(again)
        for name, value in vec.batch.get_state().items():
            assert np.array_equal(value, state[name]), name
        actions = vec.action_space.sample()
        obs2, reward, terminated, truncated, info = vec.step(actions)
        assert obs2.shape == obs.shape and reward.dtype == np.float64
    finally:
        vec.close()


@pytest.mark.parametrize("gym_id,params", MISC)
def test_misc_through_gymnasium_make_vec(gym_id, params):
    if "cartsim/" + gym_id not in gymnasium.registry:
        pytest.skip("cartsim/%s is not registered yet (the suite's ids are registered by the toy-text branch)"
                    % gym_id)
    vec = gymnasium.make_vec("cartsim/" + gym_id, num_envs=3)
    try:
        obs, _ = vec.reset(seed=0)
        assert obs.shape[0] == 3
    finally:
        vec.close()


def test_point_robot_get_state_by_name_has_gymnax_fields(root):
    """The state's names, dtypes and shapes are gymnax's EnvState fields, in its order."""
    vec = cartsim.make_vec("PointRobot-misc", num_envs=2, backend="interp")
    try:
        vec.reset(seed=1)
        state = vec.batch.get_state()
        assert [v.name for v in vec.batch.state_vars] == ["time", "last_action", "last_reward", "pos", "goal",
                                                          "goals_reached"]
        assert state["last_action"].shape == (2, 2) and state["goals_reached"].dtype == np.int32
    finally:
        vec.close()


# ---- pictures: each draws as gymnax's render() does (draw blocks of the .env files) ----

def frame_of(gym_id: str, state: dict) -> np.ndarray:
    env = cartsim.make(gym_id, backend="interp", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        batch = env.unwrapped.batch if hasattr(env.unwrapped, "batch") else env.batch
        now = batch.get_state()
        placed = {v.name: now[v.name] for v in batch.state_vars}
        placed.update({k: np.array([v]) for k, v in state.items()})
        batch.set_state(placed)
        return np.asarray(env.render())
    finally:
        env.close()


def cell_pixels(frame: np.ndarray, row: int, col: int, size: int) -> np.ndarray:
    """The pixels inside cell (row, col) of a grid of size-pixel cells, row 0 at the top."""
    return frame[row * size + 2:(row + 1) * size - 2, col * size + 2:(col + 1) * size - 2].reshape(-1, 3)


@pytest.mark.parametrize("gym_id,size,open_colour,wall_colour", [
    ("FourRooms-misc", 30, (255, 255, 255), (0, 0, 0)), ("MetaMaze-misc", 30, (253, 231, 37), (68, 1, 84))])
def test_maze_pictures(gym_id, size, open_colour, wall_colour):
    frame = frame_of(gym_id, {"pos": [3, 3], "goal": [5, 1]})
    assert frame.shape == ((13 if gym_id.startswith("Four") else 11) * size,) * 2 + (3,)
    assert np.all(cell_pixels(frame, 0, 0, size) == wall_colour)
    assert np.all(cell_pixels(frame, 1, 1, size) == open_colour)
    for row, col in ((3, 3), (5, 1)):                # the letters A and G: dark strokes on the cell
        pixels = cell_pixels(frame, row, col, size)
        assert np.any(np.all(pixels == (0, 0, 0), axis=1)) and np.any(np.all(pixels == open_colour, axis=1))


def test_point_robot_picture():
    frame = frame_of("PointRobot-misc", {"pos": [0.5, 0.25], "goal": [-0.6, 0.8]})
    assert frame.shape == (300, 500, 3)
    scale = 500 / 2.5

    def pixel(x, y):
        return tuple(frame[int(300 - (y + 0.25) * scale), int((x + 1.25) * scale)])

    assert pixel(0.5, 0.25) == (255, 0, 0)                 # the robot
    assert pixel(-0.6, 0.8) == (188, 214, 233)             # the goal's disc
    assert pixel(-0.6 + 0.15, 0.8) == (188, 214, 233)      # inside goal_radius 0.2
    assert pixel(0.0, 0.5) == (255, 255, 255)              # the background


@pytest.mark.parametrize("gym_id", ["FourRooms-misc", "MetaMaze-misc", "PointRobot-misc"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_misc_backends_agree(gym_id, dtype):
    """cartsim's own draws and the random policy: 300 steps of 64 environments (auto-resets
    included) end in the same states, with the same checksum, on the generated C as on the
    interpreter."""
    states, checksums = [], []
    for backend in ("cpu", "interp"):
        vec = cartsim.make_vec(gym_id, num_envs=64, backend=backend, dtype=dtype, threads=1)
        try:
            vec.reset(seed=9)
            stats = vec.batch.rollout(300)
            assert stats["episodes"] > 0                 # some auto-resets among them
            states.append(vec.batch.get_state())
            checksums.append(stats["checksum"])
        finally:
            vec.close()
    assert checksums[0] == checksums[1]
    for name in states[0]:
        assert np.array_equal(states[0][name], states[1][name]), name


# ---- a built-in agent learns FourRooms (docs/train.md, configs/four_rooms.ini) ----

def mean_episode_length(policy, seed: int = 100) -> float:
    """Env-steps per finished episode of 256 FourRooms over 2000 steps (policy None: random)."""
    vec = cartsim.make_vec("FourRooms-misc", num_envs=256, backend="cpu", threads=1)
    try:
        vec.reset(seed=seed)
        stats = vec.rollout(2000, policy=policy)
        return stats["env_steps"] / stats["episodes"]
    finally:
        vec.close()


def test_ppo_learns_four_rooms():
    """PPO (mlp:64, configs/four_rooms.ini's settings, a fifth of its steps) reaches the goal
    in nearly every greedy episode, gymnax-blines' return (1), and walks there in a fraction
    of a random walk's steps (at 200,000 env-steps about 85 against some 415; the best
    policy's expectation is 26.7)."""
    result = cartsim.train("FourRooms-misc", algo="ppo", policy="mlp:64", seed=1, backend="cpu", threads=1,
                           num_envs=16, total_timesteps=200000, norm_obs=True)
    assert result.eval_return >= 0.95, result.eval_return
    trained, random = mean_episode_length(result.policy), mean_episode_length(None)
    assert trained < 0.35 * random, (trained, random)

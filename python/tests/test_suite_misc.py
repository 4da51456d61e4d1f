"""gymnax's misc environments (FourRooms-misc, MetaMaze-misc, PointRobot-misc) against
gymnax 1.0.1's own episodes (tests/golden_suite, docs/suite.md sections 14-16): every
golden step and reset replayed with the reference's random outcomes through the shipped
kernel, and cartsim's own draws against the reference's distributions."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_randint, word_for_uniform

BACKENDS = ["interp"]


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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_four_rooms_steps_are_gymnax(backend, dtype, root):
    assert replay_steps(root("envs/four_rooms.env"), "FourRooms-misc", four_rooms_mapping(),
                        backend=backend, dtype=dtype) == 831


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_four_rooms_resets_are_gymnax(dtype, root):
    assert replay_resets(root("envs/four_rooms.env"), "FourRooms-misc", four_rooms_mapping(),
                         dtype=dtype) == 24


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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_meta_maze_steps_are_gymnax(backend, dtype, root):
    assert replay_steps(root("envs/meta_maze.env"), "MetaMaze-misc", meta_maze_mapping(),
                        backend=backend, dtype=dtype) == 504


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_meta_maze_resets_are_gymnax(dtype, root):
    assert replay_resets(root("envs/meta_maze.env"), "MetaMaze-misc", meta_maze_mapping(), dtype=dtype) == 12


def xla_time_normalization(t: int) -> float:
    """gymnax's time_normalization(t) as XLA computes it in float32: fma(2 t, float32(0.01), -1),
    rounded once (the double below is exact: 2 t times a 24-bit significand, minus 1)."""
    return float(np.float32(2.0 * t * float(np.float32(0.01)) - 1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_meta_maze_normalized_time_is_xlas(backend, root):
    """normalize_time=True (no golden file has it): the observation's last element is XLA's
    fused value at every time up to past the limit (at t = 11 plain float32 gives -0.78,
    XLA -0.78000003)."""
    import cartsim
    times = np.arange(0, 260, dtype=np.float64)
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
        exact = times < 150
        assert np.array_equal(got[exact], want[exact])
        assert np.allclose(got[~exact], want[~exact], rtol=2 ** -23, atol=0)
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_point_robot_steps_are_gymnax(backend, root):
    """Bit for bit in f32: the 27 restarts' cos and sin happen to be XLA's too."""
    assert replay_steps(root("envs/point_robot.env"), "PointRobot-misc", point_robot_mapping(),
                        backend=backend, dtype="float32") == 260


def test_point_robot_resets_are_gymnax(root):
    """Within XLA_TRIG_RTOL: one goal's sin (episode 2) is XLA's float32 sin, 1 ulp from cartsim's."""
    assert replay_resets(root("envs/point_robot.env"), "PointRobot-misc", point_robot_mapping(),
                         dtype="float32", rtol=XLA_TRIG_RTOL) == 7

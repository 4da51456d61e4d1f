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
                   reset_words=reset_words, obs=lambda ref: np.array(ref, dtype=np.int64),
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

"""Gymnasium 1.4's toy text beyond FrozenLake (test_suite_frozen_lake.py) against its own
episodes (tests/golden_suite, docs/suite.md sections 2-4): every golden step and reset of
every option file replayed through the shipped .env files with the reference's random
outcomes, f64 bit-exact."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_categorical, word_for_uniform

BACKENDS = ["interp"]
THIRD = 1.0 / 3.0


def _s_and_lastaction(ref):
    last = ref["lastaction"]
    return {"s": int(ref["s"]), "lastaction": -1 if last is None else int(last)}


# ---- CliffWalking-v1 and CliffWalkingSlippery-v1 (section 3) ----

def cliff_walking_mapping(slippery: bool) -> Mapping:
    def step_words(record, f32):
        # step draw 0: the entry of P[s][a] the reference's categorical picked
        if not slippery:
            return [word_for_uniform(record["draws"]["u"], f32)]
        return [word_for_categorical(record["draws"]["transition"], [THIRD] * 3, f32)]

    return Mapping(state=_s_and_lastaction, steps=lambda ref: 0, step_words=step_words,
                   reset_words=lambda record, f32: [word_for_categorical(0, [1.0], f32)],
                   obs=lambda ref: np.int64(ref), info={"prob": float})


CLIFF = [("CliffWalking-v1", "envs/cliff_walking.env", False),
         ("CliffWalkingSlippery-v1", "envs/cliff_walking_slippery.env", True)]


@pytest.mark.parametrize("stem,env,slippery", CLIFF)
@pytest.mark.parametrize("backend", BACKENDS)
def test_cliff_walking_steps_are_gymnasiums(stem, env, slippery, backend, root):
    assert replay_steps(root(env), stem, cliff_walking_mapping(slippery), backend=backend) > 300


@pytest.mark.parametrize("stem,env,slippery", CLIFF)
@pytest.mark.parametrize("backend", BACKENDS)
def test_cliff_walking_resets_are_gymnasiums(stem, env, slippery, backend, root):
    assert replay_resets(root(env), stem, cliff_walking_mapping(slippery), backend=backend) > 10


def test_cliff_walking_has_no_time_limit(root):
    import cartsim
    for env in ("envs/cliff_walking.env", "envs/cliff_walking_slippery.env"):
        vec = cartsim.make_vec(root(env), 1, backend="interp")
        try:
            assert vec.batch.max_steps <= 0
        finally:
            vec.close()

"""FrozenLake-v1 and FrozenLake8x8-v1 against Gymnasium 1.4's own episodes
(tests/golden_suite, docs/suite.md section 1): every step and reset replayed
with the reference's random outcomes, slippery and not, f64 on every backend (and f32)."""
import numpy as np
import pytest

from golden_replay import Mapping, replay_resets, replay_steps, word_for_categorical, word_for_uniform

FAIL = (1.0 - 1.0 / 3.0) / 2.0


def frozen_lake_mapping(slippery: bool) -> Mapping:
    def state(ref):
        last = ref["lastaction"]
        return {"s": int(ref["s"]), "lastaction": -1 if last is None else int(last)}

    def step_words(record, f32):
        # step draw 0: the entry of P[s][a] the reference's categorical picked
        if not slippery:
            return [word_for_uniform(record["draws"]["u"], f32)]
        return [word_for_categorical(record["draws"]["transition"], [FAIL, 1.0 / 3.0, FAIL], f32)]

    def reset_words(record, f32):
        return [word_for_categorical(0, [1.0], f32)]

    return Mapping(state=state, steps=lambda ref: int(ref.get("_elapsed_steps", 0)), step_words=step_words,
                   reset_words=reset_words, obs=lambda ref: np.int64(ref),
                   info={"prob": float})


CASES = [("FrozenLake-v1", "envs/frozen_lake.env", True),
         ("FrozenLake-v1_is_slippery=False", "envs/frozen_lake.env", False),
         ("FrozenLake8x8-v1", "envs/frozen_lake_8x8.env", True),
         ("FrozenLake8x8-v1_is_slippery=False", "envs/frozen_lake_8x8.env", False)]


# (backend, dtype): f64 to the bit on every backend; f32 too, its prob info within 1e-6
RUNS = [("interp", "float64"), ("cpu", "float64"), ("interp", "float32")]


def _run(backend, dtype):
    return dict(backend=backend, dtype=dtype, rtol=1e-6 if dtype == "float32" else 0.0)


@pytest.mark.parametrize("stem,env,slippery", CASES)
@pytest.mark.parametrize("backend,dtype", RUNS)
def test_frozen_lake_steps_are_gymnasiums(stem, env, slippery, backend, dtype, root):
    n = replay_steps(root(env), stem, frozen_lake_mapping(slippery), {"is_slippery": slippery}, **_run(backend, dtype))
    assert n > 300


@pytest.mark.parametrize("stem,env,slippery", CASES)
@pytest.mark.parametrize("backend,dtype", RUNS)
def test_frozen_lake_resets_are_gymnasiums(stem, env, slippery, backend, dtype, root):
    m = frozen_lake_mapping(slippery)
    assert replay_resets(root(env), stem, m, {"is_slippery": slippery}, **_run(backend, dtype)) > 10

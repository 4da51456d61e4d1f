"""FrozenLake-v1 and FrozenLake8x8-v1 against Gymnasium 1.4's own episodes
(tests/golden_suite, docs/suite.md section 1): every step and reset replayed
with the reference's random outcomes, slippery and not, f64 on every backend (and f32)."""
import numpy as np
import pytest

from golden_replay import Golden, Mapping, check_replay, golden_params, word_for_categorical, word_for_uniform

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


# (backend, dtype): f64 to the bit on every backend; f32 too, its prob info within 1e-6
RUNS = [("interp", "float64"), ("cpu", "float64"), ("interp", "float32")]
F32_RTOL = {"float32": 1e-6}


def frozen_lake(stem: str, env: str, slippery: bool) -> Golden:
    return Golden(stem, env, lambda: frozen_lake_mapping(slippery), steps=301, resets=11, runs=RUNS,
                  params={"is_slippery": slippery}, exact=False, step_rtol=F32_RTOL, reset_rtol=F32_RTOL)


REPLAYS = [frozen_lake("FrozenLake-v1", "envs/frozen_lake.env", True),
           frozen_lake("FrozenLake-v1_is_slippery=False", "envs/frozen_lake.env", False),
           frozen_lake("FrozenLake8x8-v1", "envs/frozen_lake_8x8.env", True),
           frozen_lake("FrozenLake8x8-v1_is_slippery=False", "envs/frozen_lake_8x8.env", False)]


@pytest.mark.parametrize("row,kind,backend,dtype", golden_params(REPLAYS))
def test_replays_are_gymnasiums(row, kind, backend, dtype):
    check_replay(row, kind, backend, dtype)

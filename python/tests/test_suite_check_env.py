"""Gymnasium's check_env on a single environment of every built-in id beyond the five
classic ones (test_vector_api.py checks those, rendering included): the suite's
environments and SpringMass, on the interpreter (no compile per id)."""
import pytest
from gymnasium.utils.env_checker import check_env

import cartsim

SUITE_IDS = sorted(set(cartsim.ENV_IDS) - set(cartsim.GYMNASIUM_IDS))


def test_the_suite_is_all_there():
    assert len(SUITE_IDS) >= 21 and "Breakout-MinAtar" in SUITE_IDS and "Taxi-v4" in SUITE_IDS


@pytest.mark.parametrize("gym_id", SUITE_IDS)
def test_check_env_passes(gym_id):
    env = cartsim.make(gym_id, backend="interp")
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()

"""The Stable-Baselines3 adapter (runs where stable-baselines3 is installed:
not in make test's venv, since it pulls PyTorch)."""
import os

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3", reason="stable-baselines3 not installed (optional)")

from cartsim.sb3 import CartsimVecEnv  # noqa: E402


def test_vecenv_conventions_and_a_short_training():
    env = CartsimVecEnv("CartPole-v1", num_envs=4, threads=1, seed=0)
    obs = env.reset()
    assert obs.shape == (4, 4) and obs.dtype == np.float32
    ended = 0
    for _ in range(100):
        obs2, rew, dones, infos = env.step(np.ones(4, dtype=np.int64))
        assert rew.dtype == np.float32 and dones.dtype == bool and len(infos) == 4
        assert not np.shares_memory(obs, obs2)                     # SB3 keeps what it is given
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (4,)
            assert infos[i]["TimeLimit.truncated"] is False       # it fell over
            assert np.all(np.abs(obs2[i]) <= 0.05)               # already reset, as SB3 wants
            ended += 1
        obs = obs2
    assert ended >= 4
    model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0).learn(256)
    assert model.num_timesteps >= 256
    env.close()


def test_the_example_runs_without_the_monitor_warning_and_logs_episodes():
    import runpy
    import warnings
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "sb3_ppo.py")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model, _, _ = runpy.run_path(example, run_name="example")["main"](512)
    assert not [w for w in seen if "Monitor" in str(w.message)], [str(w.message) for w in seen]
    assert len(model.ep_info_buffer) > 0                       # episode returns reached SB3's logger

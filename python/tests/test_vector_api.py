"""The VectorEnv behaves as gymnasium.make_vec(id, vectorization_mode="sync")
does for the same id, and the single-environment view passes Gymnasium's
own checker."""
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import cartsim

IDS = list(cartsim.GYMNASIUM_IDS)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_spaces_dtypes_shapes_metadata_like_sync(env_id, mode):
    ours = cartsim.make_vec(env_id, 3, threads=1, autoreset_mode=mode)
    ref = gym.make_vec(env_id, 3, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode})
    assert ours.num_envs == ref.num_envs == 3
    for name in ("single_observation_space", "single_action_space", "observation_space", "action_space"):
        assert getattr(ours, name) == getattr(ref, name), name
    assert ours.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"] == mode
    assert ours.metadata["render_fps"] == ref.metadata["render_fps"]
    got, want = ours.reset(seed=1), ref.reset(seed=1)
    for g, w in zip(got, want):
        assert type(g) is type(w)
    assert got[0].shape == want[0].shape and got[0].dtype == want[0].dtype and got[1] == want[1] == {}
    assert ours.observation_space.contains(got[0])
    actions = ref.action_space.sample()
    got, want = ours.step(actions), ref.step(actions)
    for g, w in zip(got[:4], want[:4]):
        assert g.shape == w.shape and g.dtype == w.dtype
    assert got[4].keys() == want[4].keys() == set()
    ours.close()
    ref.close()


def test_registered_on_import_and_make_vec_kwargs():
    envs = gym.make_vec("cartsim/CartPole-v1", num_envs=16, threads=1, dtype="float64")
    assert isinstance(envs.unwrapped, cartsim.VectorEnv) and envs.num_envs == 16
    assert envs.unwrapped.batch.dtype == np.float64 and envs.unwrapped.batch.threads == 1
    assert envs.spec.id == "cartsim/CartPole-v1"
    obs, _ = envs.reset(seed=42)
    assert obs.shape == (16, 4)
    envs.close()
    single = gym.make("cartsim/Acrobot-v1")
    assert single.reset(seed=0)[0].shape == (6,)
    single.close()
    for env in ("cartpole", "envs/spring_mass.env"):       # a cartsim name, a path to a .env file
        e = cartsim.make_vec(env, 2, threads=1)
        assert e.reset(seed=0)[0].shape == (2, e.batch.obs_dim)
        e.close()


def test_same_step_final_obs_and_final_info_as_gymnasium_defines_them():
    envs = cartsim.make_vec("CartPole-v1", 8, threads=1, dtype="float64", autoreset_mode="SameStep")
    envs.reset(seed=0)
    ended_seen = 0
    for _ in range(60):
        before = envs.get_state()
        obs, rew, term, trunc, info = envs.step(np.ones(8, dtype=np.int64))  # falls over fast
        ended = term | trunc
        if not ended.any():
            assert info == {}
            continue
        ended_seen += ended.sum()
        assert set(info) == {"final_obs", "_final_obs", "final_info", "_final_info"}
        assert info["final_obs"].dtype == object and info["final_obs"].shape == (8,)
        assert np.array_equal(info["_final_obs"], ended) and np.array_equal(info["_final_info"], ended)
        for i in range(8):
            if ended[i]:
                # the ending observation is the state the step made, the returned one a fresh episode's
                final = info["final_obs"][i]
                assert final.dtype == np.float32 and final.shape == (4,)
                assert abs(final[2]) > 0.2 or abs(final[0]) > 2.4
                assert np.all(np.abs(obs[i]) <= 0.05)
                assert rew[i] == 1.0
            else:
                assert info["final_obs"][i] is None
        assert info["final_info"] == {}
        del before
    assert ended_seen >= 8


def test_next_step_autoreset_ignores_the_action_and_clears_the_flags():
    envs = cartsim.make_vec("CartPole-v1", 4, threads=1)
    envs.reset(seed=0)
    for _ in range(60):
        _, _, term, trunc, _ = envs.step(np.zeros(4, dtype=np.int64))
        if (term | trunc).all():
            break
    ended = (term | trunc).copy()
    assert ended.any()
    obs, rew, term, trunc, info = envs.step(np.zeros(4, dtype=np.int64))
    assert np.all(rew[ended] == 0) and not term[ended].any() and not trunc[ended].any()
    assert np.all(np.abs(obs[ended]) <= 0.05)


def test_seeding_is_reproducible():
    def run(seed_ctor, seed_reset):
        e = cartsim.make_vec("Pendulum-v1", 5, threads=1, seed=seed_ctor)
        rng = np.random.default_rng(0)
        out = [e.reset(seed=seed_reset)[0].copy()]
        for _ in range(30):
            out.append(e.step(rng.uniform(-2, 2, (5, 1)).astype(np.float32))[0].copy())
        out.append(e.reset()[0].copy())          # an unseeded reset continues from the seed
        e.close()
        return np.array(out)

    assert np.array_equal(run(None, 7), run(None, 7))
    assert not np.array_equal(run(None, 7)[0], run(None, 8)[0])
    assert np.array_equal(run(3, None), run(3, None))
    assert not np.array_equal(run(3, None)[0], run(4, None)[0])
    e = cartsim.make_vec("CartPole-v1", 5, threads=1)
    first = e.reset(seed=11)[0].copy()
    e.step(np.zeros(5, dtype=np.int64))
    assert np.array_equal(e.reset(seed=11)[0], first)
    assert len({tuple(row) for row in first}) == 5          # environments differ from one another


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_on_a_single_environment(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                    # Gymnasium warns alike for its own environments
        check_env(cartsim.make(env_id, render_mode="rgb_array", threads=1))
        check_env(gym.make("cartsim/" + env_id, render_mode="rgb_array", threads=1).unwrapped)


def test_rgb_array_frames():
    envs = cartsim.make_vec("CartPole-v1", 3, threads=1, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 3 and all(f.shape == (400, 600, 3) and f.dtype == np.uint8 for f in frames)
    assert (frames[0] == 255).mean() > 0.5                 # white background, as Gymnasium draws it
    assert envs.render_tiles(0, 3, 2).shape == (800, 1200, 3)
    assert not np.array_equal(frames[0], frames[1])        # different states, different pictures
    envs.close()
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert cartsim.make_vec("CartPole-v1", 1, threads=1).render() is None


BALL = ("env ball \"Ball-v0\"\nstate x\naction discrete 2\nobserve x\nreset { x = uniform(-0.5, 0.5) }\n"
        "step { x' = x; reward = 1; terminated = false }\n")


def test_a_users_own_environment_draws_itself(tmp_path):
    """A file of one's own with a draw block renders through rgb_array, at its own fps; one
    without says what to add."""
    (tmp_path / "ball.env").write_text(BALL + "draw {\n    canvas(60, 40)\n    fps(12)\n    view(-1, 1, -1)\n"
                                       "    circle(x, 0, 0.2, rgb(200, 0, 0))\n}\n")
    (tmp_path / "plain.env").write_text(BALL)
    envs = cartsim.make_vec(str(tmp_path / "ball.env"), 2, threads=1, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert envs.metadata["render_fps"] == 12
    assert all(f.shape == (40, 60, 3) for f in frames)
    assert all((f == (200, 0, 0)).all(axis=2).sum() > 20 for f in frames)
    assert not np.array_equal(frames[0], frames[1])
    envs.close()
    plain = cartsim.make_vec(str(tmp_path / "plain.env"), 1, threads=1, render_mode="rgb_array")
    plain.reset(seed=0)
    assert plain.metadata["render_fps"] == 30
    with pytest.raises(cartsim.CartsimError, match="has no picture: add a draw block"):
        plain.render()
    plain.close()

"""cartsim against Gymnasium's own environments, live: the same actions from
the same states give the same trajectories, to the last bit in f64.

The reference is gymnasium.make_vec(id, vectorization_mode="sync") with the
same autoreset mode: its sub-environments are gymnasium.make(id), so this
checks the physics, rewards, flags, truncation and both auto-reset
conventions (final_obs/final_info) at once. Gymnasium resets from its own
random numbers, so after every reset each of its environments is given
cartsim's fresh state; every other step runs free on both sides.
"""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cartsim

IDS = list(cartsim.GYMNASIUM_IDS)
NUM_ENVS = 6


def gym_obs(env_id, unwrapped):
    """The observation Gymnasium's environment gives for its current state."""
    if env_id == "Pendulum-v1":
        return unwrapped._get_obs()
    if env_id == "Acrobot-v1":
        return unwrapped._get_ob()
    return np.array(unwrapped.state, dtype=np.float32)


def policy(env_id, obs, rng, t):
    """Half the environments random, half a controller that keeps episodes long
    (CartPole balances to its 500-step truncation), in float32 for box actions."""
    n = obs.shape[0]
    if env_id in ("Pendulum-v1", "MountainCarContinuous-v0"):
        bound = 2.0 if env_id == "Pendulum-v1" else 1.0
        a = rng.uniform(-1.3 * bound, 1.3 * bound, (n, 1))          # out of range too: clipped by both
        a[n // 2:, 0] = np.where(obs[n // 2:, -1] > 0, bound, -bound)
        return a.astype(np.float32)
    n_actions = {"CartPole-v1": 2, "MountainCar-v0": 3, "Acrobot-v1": 3}[env_id]
    a = rng.integers(0, n_actions, n)
    if env_id == "CartPole-v1":
        a[n // 2:] = (obs[n // 2:, 2] + 0.5 * obs[n // 2:, 3] > 0)
    elif env_id == "MountainCar-v0":
        a[n // 2:] = np.where(obs[n // 2:, 1] > 0, 2, 0)
    else:                                        # Acrobot: pump energy against the first link's swing
        a[n // 2:] = np.where(obs[n // 2:, 4] > 0, 0, 2)
    return a


def bits_equal(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def sync_states(ours, reference, env_id, indices, state):
    for i in indices:
        u = reference.envs[i].unwrapped
        u.state = state[i].copy()
        assert bits_equal(ours[i], gym_obs(env_id, u)), "reset observation of env %d" % i


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("env_id", IDS)
def test_f64_bit_exact(env_id, mode):
    steps = {"MountainCarContinuous-v0": 2100, "CartPole-v1": 1100}.get(env_id, 700)
    envs = cartsim.make_vec(env_id, NUM_ENVS, dtype="float64", threads=1, autoreset_mode=mode)
    reference = gym.make_vec(env_id, NUM_ENVS, vectorization_mode="sync",
                             vector_kwargs={"autoreset_mode": mode})
    rng = np.random.default_rng(7)
    obs, _ = envs.reset(seed=3)
    reference.reset(seed=3)
    sync_states(obs, reference, env_id, range(NUM_ENVS), envs.get_state())
    pending = np.zeros(NUM_ENVS, bool)
    seen = {"terminated": 0, "truncated": 0, "auto-resets": 0}
    for t in range(steps):
        actions = policy(env_id, obs, rng, t)
        obs, rew, term, trunc, info = envs.step(actions)
        ref_obs, ref_rew, ref_term, ref_trunc, ref_info = reference.step(actions)
        state = envs.get_state()
        assert bits_equal(rew, ref_rew) and bits_equal(term, ref_term) and bits_equal(trunc, ref_trunc), t
        assert sorted(info) == sorted(ref_info), t
        ended = term | trunc
        if mode == AutoresetMode.NEXT_STEP:
            fresh = pending                      # these were reset by this call: rewards 0, flags clear
            stepped = ~pending
        else:
            fresh = ended                        # these were reset inside this call
            stepped = ~ended
            for key in ("_final_obs", "_final_info"):
                if key in info:
                    assert bits_equal(info[key], ref_info[key]), t
            for i in np.flatnonzero(ended):
                assert bits_equal(info["final_obs"][i], ref_info["final_obs"][i]), (t, i)
                assert info["final_info"] == ref_info["final_info"] == {}
        for i in np.flatnonzero(stepped):
            assert bits_equal(obs[i], ref_obs[i]), (t, i)
            ref_state = np.asarray(reference.envs[i].unwrapped.state, dtype=np.float64)
            assert bits_equal(state[i], ref_state), (t, i, state[i], ref_state)
        sync_states(obs, reference, env_id, np.flatnonzero(fresh), state)
        seen["terminated"] += int(term.sum())
        seen["truncated"] += int(trunc.sum())
        seen["auto-resets"] += int(fresh.sum())
        pending = ended if mode == AutoresetMode.NEXT_STEP else np.zeros(NUM_ENVS, bool)
    # Every run must have gone through truncation and auto-resets (and termination where it can happen).
    assert seen["truncated"] > 0 and seen["auto-resets"] > 0, seen
    if env_id != "Pendulum-v1":
        assert seen["terminated"] > 0, seen
    envs.close()
    reference.close()


# How far from the termination boundary a float32 state may flip the flag
# (tests/test_golden.c excuses flags within 1e-5 of a threshold).
def near_boundary(env_id, s):
    if env_id == "CartPole-v1":
        return min(abs(abs(s[0]) - 2.4), abs(abs(s[2]) - 12 * 2 * np.pi / 360)) <= 1e-5
    if env_id in ("MountainCar-v0", "MountainCarContinuous-v0"):
        goal = 0.5 if env_id == "MountainCar-v0" else 0.45
        return abs(s[0] - goal) <= 1e-5 or abs(s[1]) <= 1e-5
    if env_id == "Acrobot-v1":
        return abs(-np.cos(s[0]) - np.cos(s[1] + s[0]) - 1.0) <= 1e-5
    return False


# Absolute floors of tests/test_golden.c: Pendulum's unwrapped angle and
# Acrobot's fast wrapped angles are only that good in float32.
F32_FLOOR = {"Pendulum-v1": 1e-5, "Acrobot-v1": 2e-5}


def close(got, want, rel=1e-5, floor=1e-6):
    return np.all(np.abs(got - want) <= np.maximum(np.abs(want) * rel, floor))


@pytest.mark.parametrize("env_id", IDS)
def test_f32_per_step_within_golden_tolerance(env_id):
    """f32 drifts from f64 over an episode (chaotic systems), so as in tests/test_golden.c each step
    starts Gymnasium from cartsim's state and the next state, observation and reward must agree
    within 1e-5 relative (1e-6 absolute)."""
    envs = cartsim.make_vec(env_id, NUM_ENVS, dtype="float32", threads=1)
    singles = [gym.make(env_id) for _ in range(NUM_ENVS)]
    for i, e in enumerate(singles):
        e.reset(seed=i)
    rng = np.random.default_rng(11)
    obs, _ = envs.reset(seed=5)
    pending = np.zeros(NUM_ENVS, bool)
    compared = 0
    for t in range(400):
        before = envs.get_state()
        actions = policy(env_id, obs, rng, t)
        obs, rew, term, trunc, _ = envs.step(actions)
        after = envs.get_state()
        for i in np.flatnonzero(~pending):
            e = singles[i]
            e.unwrapped.state = before[i].copy()
            ref_obs, ref_rew, ref_term, _, _ = e.step(actions[i])
            ref_state = np.asarray(e.unwrapped.state, dtype=np.float64)
            floor = F32_FLOOR.get(env_id, 1e-6)
            assert close(after[i], ref_state, floor=floor), (t, i, after[i], ref_state)
            assert close(obs[i].astype(np.float64), ref_obs.astype(np.float64), floor=floor), (t, i)
            assert close(rew[i], ref_rew, floor=1e-5), (t, i, rew[i], ref_rew)
            assert term[i] == ref_term or near_boundary(env_id, ref_state), (t, i)
            compared += 1
        for i in np.flatnonzero(pending):
            singles[i].reset()                   # TimeLimit's step count starts again with cartsim's
        pending = term | trunc
    assert compared > 300 * NUM_ENVS // 2
    envs.close()

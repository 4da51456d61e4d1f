"""envs.rollout(steps, policy=...): policy names, policy files and trained
policies, continuing from the vector environment's state, against the
command line's statistics for the same seed."""
import json
import os
import subprocess

import numpy as np
import pytest

import cartsim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.environ.get("CARTSIM_BIN", os.path.join(ROOT, "build", "cartsim"))

# Pushes toward the pole's lean: output 1 (push right) = theta + theta_dot, output 0 = 0.
LEAN_WEIGHTS = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 0], dtype=np.float64)


def command_line(envs, steps, seed, policy, *extra):
    out = subprocess.run([PROGRAM, "--env", "cartpole", "--envs", str(envs), "--steps", str(steps), "--seed",
                          str(seed), "--policy", str(policy), "--threads", "1", "--json"] + list(extra),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def same_statistics(stats, cli):
    assert "%016x" % stats["checksum"] == cli["checksum"]
    assert stats["episodes"] == cli["episodes"] and stats["env_steps"] == cli["env_steps"]
    assert stats["mean_return"] == pytest.approx(cli["mean_return"], rel=1e-12)


@pytest.mark.parametrize("policy", ["heuristic", "random"])
def test_a_policy_name_gives_the_command_line_statistics(policy):
    envs = cartsim.make_vec("CartPole-v1", 128, threads=1, dtype="float64", params={"length": (0.4, 0.6)})
    envs.reset(seed=7)
    stats = envs.rollout(600, policy=policy)
    assert stats["episodes"] > 0
    same_statistics(stats, command_line(128, 600, 7, policy, "--dtype", "f64", "--param", "length=0.4:0.6"))
    envs.close()


def test_a_policy_file_and_a_trained_policy_give_the_command_line_statistics(tmp_path):
    path = tmp_path / "lean.pol"
    cartsim.save_policy(path, "cartpole", "linear", LEAN_WEIGHTS)
    cli = command_line(64, 700, 3, path)
    envs = cartsim.make_vec("CartPole-v1", 64, threads=1)
    for policy in (str(path), path, cartsim.load_policy(path)):
        envs.reset(seed=3)
        stats = envs.rollout(700, policy=policy)
        same_statistics(stats, cli)
        assert stats["mean_return"] > 100           # the lean controller balances, unlike random actions
    assert len(envs.batch._siblings) == 1          # one compiled "linear" sibling, whichever way it came
    envs.close()


def test_a_rollout_continues_from_the_current_state_and_leaves_it_where_it_ended():
    """A random-policy env rolling out the heuristic from the middle of its episodes
    (next-step restarts pending) equals an env built with the heuristic, stepped alike."""
    envs = cartsim.make_vec("CartPole-v1", 96, threads=1)
    reference = cartsim.make_vec("CartPole-v1", 96, threads=1, policy="heuristic")
    for e in (envs, reference):
        e.reset(seed=11)
    actions = np.arange(96) % 2
    pending = False
    for t in range(40):
        _, _, term, trunc, _ = envs.step(actions)
        reference.step(actions)
        pending = bool((term | trunc).any())
    assert pending, "no episode ended at the last step: no restart pending"
    stats = envs.rollout(250, policy="heuristic")
    expected = reference.rollout(250)
    assert stats["checksum"] == expected["checksum"] and stats["episodes"] == expected["episodes"]
    assert np.array_equal(stats["episode_returns"], expected["episode_returns"], equal_nan=True)
    assert np.array_equal(envs.get_state(), reference.get_state())
    obs = envs.step(actions)[0]
    assert np.array_equal(obs, reference.step(actions)[0])     # stepping goes on from the rollout's end
    sibling = envs.batch.with_policy("heuristic")
    envs.close()
    assert sibling.closed                                       # closed with the environment
    reference.close()


def test_a_bad_policy_raises_with_the_library_message():
    envs = cartsim.make_vec("CartPole-v1", 4, threads=1)
    envs.reset(seed=0)
    with pytest.raises(cartsim.CartsimError) as e:
        envs.rollout(10, policy="nosuch")
    assert e.value.status == "CS_ERR_ARGUMENT"
    assert str(e.value) == "policy 'nosuch': cartpole declares no such policy (it declares: heuristic)"
    with pytest.raises(ValueError, match="for pendulum, not cartpole"):
        envs.rollout(10, policy=cartsim.Policy("pendulum", "linear", np.zeros(4)))
    with pytest.raises(TypeError):
        envs.rollout(10, policy=3)
    assert envs.batch._siblings == {}              # nothing kept of the failures
    envs.close()

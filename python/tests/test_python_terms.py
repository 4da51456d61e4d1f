"""Mistakes reach the user in Python's terms and the user's words: the function
they called, the keyword they wrote, Gymnasium's own rules and warnings."""
import os
import re
import time
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cartsim

HERE = os.path.dirname(os.path.abspath(__file__))


def test_an_unknown_keyword_names_the_function_called_and_the_keywords_it_takes():
    with pytest.raises(TypeError, match=r"^cartsim\.make_vec\(\) got an unexpected keyword argument 'sed' "
                                        r"\(did you mean 'seed'\?\); its keywords: .*\bseed\b"):
        cartsim.make_vec("CartPole-v1", 2, sed=3)
    with pytest.raises(TypeError, match=r"^cartsim\.make\(\) got an unexpected keyword argument 'treads' "
                                        r"\(did you mean 'threads'\?\)"):
        cartsim.make("CartPole-v1", treads=1)
    with pytest.raises(TypeError, match=r"^cartsim\.VectorEnv\(\) got an unexpected keyword argument 'colour'; "
                                        r"its keywords: "):
        gym.make_vec("cartsim/CartPole-v1", 2, colour="red")
    with pytest.raises(TypeError, match=r"^cartsim\.train\(\) got an unexpected keyword argument 'sigmaa' "
                                        r"\(did you mean 'sigma'\?\)"):
        cartsim.train("CartPole-v1", sigmaa=0.1)


def test_num_envs_is_named_and_must_be_an_integer():
    with pytest.raises(ValueError, match=r"num_envs: '0' is out of range \(1 to 2147483647\)"):
        cartsim.make_vec("CartPole-v1", 0)
    for not_an_integer in (4.5, 4.0, "4", True):
        with pytest.raises(TypeError, match=r"num_envs must be an integer, not %s" % repr(not_an_integer)):
            cartsim.make_vec("CartPole-v1", not_an_integer)
    assert cartsim.make_vec("CartPole-v1", np.int64(3), threads=1).num_envs == 3      # NumPy's integers are integers
    with pytest.raises(TypeError, match="threads must be an integer, not 1.5"):
        cartsim.make_vec("CartPole-v1", 2, threads=1.5)
    with pytest.raises(ValueError, match=r"^cartsim: unroll: "):
        cartsim.make_vec("CartPole-v1", 2, unroll=0)


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("policy") / "cartpole.pol"
    cartsim.save_policy(path, "cartpole", "linear", np.zeros(10))
    return str(path)


def test_evaluate_says_what_its_arguments_are(policy_file):
    with pytest.raises(TypeError, match=r"episodes must be an integer, not 'Pendulum-v1' \(the policy names its "
                                        r"environment; env='Pendulum-v1' if it must be found elsewhere\)"):
        cartsim.evaluate(policy_file, "Pendulum-v1")
    with pytest.raises(ValueError, match="the policy is for cartpole, not pendulum"):
        cartsim.evaluate(policy_file, env="Pendulum-v1", episodes=4, threads=1)
    returns = cartsim.evaluate(policy_file, env="CartPole-v1", episodes=4, threads=1)   # the same environment
    assert np.array_equal(returns, cartsim.evaluate(policy_file, episodes=4, threads=1))
    with pytest.raises(TypeError, match=r"^cartsim\.evaluate\(\) got an unexpected keyword argument 'episode' "):
        cartsim.evaluate(policy_file, episode=4)
    with pytest.raises(TypeError, match="episodes must be an integer, not 2.5"):
        cartsim.evaluate(policy_file, 2.5)


def test_render_without_a_render_mode_warns_as_gymnasium_does():
    for env in (cartsim.make_vec("CartPole-v1", 2, threads=1), cartsim.make("CartPole-v1", threads=1)):
        env.reset(seed=0)
        with pytest.warns(UserWarning, match="You are calling render method without specifying any render mode"):
            assert env.render() is None
        env.close()


def test_sync_vectorization_of_registered_ids_warns_and_the_default_is_one_batch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = gym.make_vec("cartsim/CartPole-v1", 3, threads=1)     # the registered default: the vector entry point
    assert isinstance(envs.unwrapped, cartsim.VectorEnv) and envs.unwrapped.batch.num_envs == 3
    envs.close()
    with pytest.warns(UserWarning, match=r"vectorization_mode=\"sync\" or \"async\"\) steps its environments one "
                                         r"at a time"):
        envs = gym.make_vec("cartsim/CartPole-v1", 3, vectorization_mode="sync", threads=1)
    assert isinstance(envs, gym.vector.SyncVectorEnv)
    envs.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym.make("cartsim/CartPole-v1", threads=1).close()                # one environment asked for: no warning


def _box3_env(tmp_path):
    path = tmp_path / "box3.env"
    path.write_text('env box3 "Box3-v0"\nmax_steps 10\nstate x\naction box(-1, 1, 3)\nobserve x\n'
                    "reset { x = 0 }\nstep {\n    x' = x + action[0] + action[1] + action[2]\n"
                    "    reward = x'\n    terminated = x' > 100\n}\n")
    return str(path)


@pytest.mark.parametrize("kind", ["discrete", "box of 1", "box of 3"])
def test_one_action_shape_rule_for_every_kind_the_vector_action_space_shape(kind, tmp_path):
    env = {"discrete": "CartPole-v1", "box of 1": "Pendulum-v1", "box of 3": None}[kind] or _box3_env(tmp_path)
    envs = cartsim.make_vec(env, 4, threads=1)
    envs.reset(seed=0)
    shape = envs.action_space.shape
    assert shape == ((4,) if kind == "discrete" else (4, envs.single_action_space.shape[0]))
    envs.step(envs.action_space.sample())                          # what the space gives is taken
    wrong = [(4, 1), (1, 4), (2, 2), (), (5,)] if kind == "discrete" else [(4,), (1, 4 * shape[1]), (4, shape[1], 1),
                                                                        (4, shape[1] + 1), (shape[1], 4)]
    for bad in wrong:
        if bad == shape:
            continue
        zeros = np.zeros(bad, dtype=np.int64 if kind == "discrete" else np.float32)
        with pytest.raises(ValueError, match=r"actions must have shape %s, the action space's \(one row per "
                                             r"environment" % re.escape(str(shape))):
            envs.step(zeros)
    envs.close()


def test_int64_actions_step_as_int32_ones_and_are_checked_whole():
    a, b = (cartsim.make_vec("CartPole-v1", 130, threads=1, dtype="float64") for _ in range(2))
    a.reset(seed=4)
    b.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(50):
        actions = rng.integers(0, 2, 130)
        assert actions.dtype == np.int64
        a.step(actions)
        b.step(actions.astype(np.int32))
    assert np.array_equal(a.get_state(), b.get_state())
    for value, shown in ((2**32, "4294967296"), (-1, "-1"), (2**31, "2147483648"), (2, "2")):
        actions = np.zeros(130, dtype=np.int64)
        actions[129] = value                                          # past the 64-lane chunks: the tail loop
        with pytest.raises(cartsim.CartsimError, match=r"action %s of environment 129 is not in \[0, 2\)" % shown):
            a.step(actions)
        actions[129], actions[3] = 0, value                           # inside a chunk
        with pytest.raises(cartsim.CartsimError, match=r"action %s of environment 3 is not in \[0, 2\)" % shown):
            a.step(actions)


def test_make_pytest_keeps_its_kernels_in_the_build_folder():
    library = os.environ.get("CARTSIM_LIBRARY")
    if not library:
        pytest.skip("run through make pytest (it sets CARTSIM_LIBRARY to the build's library)")
    cache = os.path.join(os.path.dirname(library), "test-cache", "cartsim")
    started = time.time() - 1
    envs = cartsim.make_vec("CartPole-v1", 2, threads=1, params={"length": 0.5 + time.time() % 1e-3})  # a new kernel
    envs.close()
    newest = max(os.path.getmtime(os.path.join(cache, f)) for f in os.listdir(cache)) if os.path.isdir(cache) else 0
    assert newest >= started, "the kernel did not go to %s (make pytest's XDG_CACHE_HOME)" % cache



def test_ctrl_c_while_compiling_raises_keyboard_interrupt_at_once(tmp_path):
    import signal
    import subprocess
    import sys
    cc = tmp_path / "sleepy-cc"
    started = tmp_path / "cc-started"
    cc.write_text("#!/bin/sh\ntouch '%s'\nsleep 60\n" % started)
    cc.chmod(0o700)
    # Python's own SIGINT handler even where this test's runner ignores the
    # signal (a child of `cmd &` in a shell without job control inherits SIG_IGN)
    script = ("import signal, sys, time, cartsim\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "print('compiling', flush=True)\nt0 = time.time()\n"
              "try:\n    cartsim.make_vec('CartPole-v1', 4, backend='cpu')\n"
              "except KeyboardInterrupt:\n    print('KeyboardInterrupt after %.1f s' % (time.time() - t0))\n")
    env = dict(os.environ, CC=str(cc), XDG_CACHE_HOME=str(tmp_path / "cache"))
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline() == "compiling\n"
    # the signal must come while the compile waits (cs_config.interrupt's
    # contract when NULL): once the compiler has started, however slow the machine
    deadline = time.time() + 30
    while not started.exists() and time.time() < deadline:
        time.sleep(0.01)
    assert started.exists(), "the compiler never started"
    time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=20)
    assert out.startswith("KeyboardInterrupt after "), (out, err)
    assert float(out.split()[2]) < 10, out            # not when the compiler would have finished (60 s)
    leftovers = [p for p in (tmp_path / "cache").rglob(".build-*")]
    assert not leftovers, leftovers

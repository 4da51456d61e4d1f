"""One environment used from several Python threads (issue 32, 4): the
binding releases the GIL in every library call, and a handle takes one call
at a time, so each batch has a lock. Without it two threads stepping one batch
crashed the process or deadlocked it, so each scenario runs in a child
process with a time limit: a crash or a hang fails the test instead of
taking pytest down with it."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRELUDE = textwrap.dedent("""
    import threading
    import numpy as np
    import cartsim

    errors = []

    def run_in_threads(*bodies):
        def guarded(body):
            try:
                body()
            except BaseException as e:   # every thread's failure counts
                errors.append(repr(e))
        threads = [threading.Thread(target=guarded, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
""")


def run_child(body, timeout=240):
    script = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("the threads deadlocked: still running after %d s" % timeout)
    assert done.returncode == 0, "the child died (status %d): %s%s" % (done.returncode, done.stdout, done.stderr)
    return done.stdout


def test_two_threads_stepping_and_rolling_out_one_environment_take_turns():
    out = run_child("""
        envs = cartsim.Batch("cartpole", 4096, threads=2)
        envs.reset(0)

        def roll():
            for _ in range(200):
                envs.rollout(50)

        def step():
            actions = np.zeros(envs.num_envs, dtype=np.int32)
            for _ in range(2000):
                envs.step(actions)
                envs.results()
                envs.get_state()

        run_in_threads(roll, step, roll, step)
        assert not errors, errors
        stats = envs.rollout(10)
        assert stats["env_steps"] == 10 * 4096
        print("ok")
    """)
    assert out.strip() == "ok"


def test_close_while_another_thread_steps_is_an_error_in_that_thread_not_a_crash():
    out = run_child("""
        for attempt in range(20):
            envs = cartsim.Batch("cartpole", 2048, threads=2)
            envs.reset(0)
            started = threading.Event()
            seen = []

            def step():
                actions = np.ones(envs.num_envs, dtype=np.int32)
                try:
                    while True:
                        envs.rollout(20)
                        started.set()
                        envs.step(actions)
                except cartsim.CartsimError as e:
                    seen.append(e.status)

            def close():
                started.wait()
                envs.close()

            run_in_threads(step, close)
            assert not errors, errors
            assert seen == ["CS_ERR_STATE"], seen
            assert envs.closed
        print("ok")
    """)
    assert out.strip() == "ok"

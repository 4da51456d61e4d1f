"""The README's "From Python" example runs as written."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_example_runs():
    with open(os.path.join(ROOT, "README.md")) as f:
        section = f.read().split("## From Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["obs"].shape == (4096, 4) and scope["rew"].shape == (4096,)
    assert scope["terminated"].dtype == bool and scope["info"] == {}
    scope["envs"].close()


def test_what_the_examples_write_in_the_checkout_stays_out_of_git():
    """train --config configs/es_cartpole.ini writes cartpole_es.pol where it runs,
    the README's render and dump lines frames/ and graph.png: none is left untracked."""
    import shutil
    import subprocess
    import pytest
    if not shutil.which("git") or not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(
            os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout")
    written = ["cartpole_es.pol", "cartpole.pol", "frames/000000.png", "pendulum.gif", "graph.png", "cartpole.mp4"]
    ignored = subprocess.run(["git", "-C", ROOT, "check-ignore", "--no-index"] + written, capture_output=True,
                             text=True).stdout.split()
    assert sorted(ignored) == sorted(written)
    assert not subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", "--no-index", "docs/cartpole_trained.gif"]).returncode == 0

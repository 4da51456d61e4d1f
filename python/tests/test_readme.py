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

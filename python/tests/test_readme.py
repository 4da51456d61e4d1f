"""Every example of README.md runs as written: each command line of its sh
blocks (in order, in a scratch folder laid out as the checkout), each Python
block, the C block (tests/example.c, which make test builds and runs), the
environment (envs/spring_mass.env) and the configuration file."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.dirname(os.environ.get("CARTSIM_LIBRARY", os.path.join(ROOT, "build", "libcartsim.so")))

# Lines not run here, each with the place that runs it instead.
NOT_HERE = {
    "make run": "the command that builds what this test runs",
    "make test": "the command that runs this test",
    "pip install ./python": "test_pip_install_of_the_readme_installs_a_working_package below",
    # PyTorch is no dependency of make test (hundreds of MB from the network): the example's
    # PPO loss is tests/test_ppo.c's reference test, run where torch is (make torch-venv).
    'pip install "./python[ppo]" --extra-index-url https://download.pytorch.org/whl/cpu':
        "nowhere in make test: it downloads PyTorch",
    "python python/examples/ppo.py --backend cartsim": "nowhere in make test: it needs PyTorch",
}


def readme_blocks():
    """(info string, text) of every fenced block of README.md, in order."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)]


def command_lines():
    lines = []
    for info, text in readme_blocks():
        if info == "sh":
            lines += [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return lines


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A folder where the README's relative paths lead where they lead in the
    checkout (build/, envs/, configs/, ../shared/) but whatever the commands
    write stays out of it."""
    top = tmp_path_factory.mktemp("readme")
    work = top / "cartsim"
    work.mkdir()
    os.symlink(BUILD, work / "build")
    for name in ("envs", "configs", "docs", "python"):
        os.symlink(os.path.join(ROOT, name), work / name)
    os.symlink(os.path.join(os.path.dirname(ROOT), "shared"), top / "shared")
    return work


def test_every_command_line_of_the_readme_runs(sandbox):
    env = dict(os.environ, SDL_VIDEODRIVER="offscreen", CARTSIM_VIEW_SCRIPT="wait 3; key q")
    if os.geteuid() == 0:                            # what the README says mpirun wants from root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ran, failed = 0, []
    for line in command_lines():
        command = line.split("#")[0].strip()
        if command in NOT_HERE:
            continue
        if command.startswith("mpirun") and not shutil.which("mpirun"):
            pytest.skip("mpirun is missing (make test installs Open MPI)")
        r = subprocess.run(["bash", "-c", command], cwd=sandbox, env=env, capture_output=True, text=True,
                           timeout=600)
        if r.returncode == 2 and " view " in command and ("SDL2" in r.stderr or "display" in r.stderr):
            continue                                  # a build without SDL2 says so, tested in tests/test_render.c
        ran += 1
        if r.returncode != 0:
            failed.append("%s\n  exit %d: %s" % (command, r.returncode, r.stderr.strip()[-400:]))
    assert not failed, "\n".join(failed)
    assert ran >= 20, "only %d command lines found" % ran


def test_the_python_blocks_run():
    blocks = [text for info, text in readme_blocks() if info == "python"]
    assert len(blocks) >= 2
    first = {}
    exec(compile(blocks[0], "README.md", "exec"), first)
    assert first["obs"].shape == (4096, 4) and first["rew"].shape == (4096,)
    assert first["terminated"].dtype == bool and first["info"] == {}
    first["envs"].close()
    second = {}
    exec(compile(blocks[1], "README.md", "exec"), second)
    assert second["result"].solved and second["returns"].mean() >= 475


def test_the_c_block_is_tests_example_c():
    with open(os.path.join(ROOT, "tests", "example.c")) as f:
        example = f.read()
    example = example[example.index("*/\n") + 3:] if example.startswith("/*") else example   # its opening comment
    assert [text for info, text in readme_blocks() if info == "c"] == [example]


def test_the_environment_block_is_envs_spring_mass_env():
    with open(os.path.join(ROOT, "envs", "spring_mass.env")) as f:
        source = f.read()
    source = source[source.index("\nenv ") + 1:]           # after its opening comment
    assert [text for info, text in readme_blocks() if text.startswith("env ") and "\nstep {" in text] == [source]


def test_the_configuration_block_is_read(tmp_path):
    (ini,) = [text for info, text in readme_blocks() if info == "ini"]
    path = tmp_path / "example.ini"
    path.write_text(ini)
    program = os.environ.get("CARTSIM_BIN", os.path.join(ROOT, "build", "cartsim"))
    r = subprocess.run([program, "--config", str(path), "--print-config"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "envs = 2048" in r.stdout and "length = 0.4:0.6" in r.stdout


def test_pip_install_of_the_readme_installs_a_working_package(tmp_path):
    """`pip install ./python` into a scratch virtual environment (this one's
    packages seen through it; pip fetches only its build tools from PyPI): the
    installed package carries its own library and works from anywhere."""
    import site
    import sysconfig
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    with open(os.path.join(purelib, "outer.pth"), "w") as f:   # NumPy, Gymnasium, cffi: this venv's
        f.write("\n".join(site.getsitepackages()) + "\n")
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--disable-pip-version-check",
                        "./python"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("CARTSIM_LIBRARY", "CARTSIM_HEADER", "PYTHONPATH")}
    r = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import cartsim; e = cartsim.make_vec('CartPole-v1', 2, threads=1); "
                        "print(cartsim.__file__, e.reset(seed=0)[0].shape)"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert str(venv) in r.stdout and "(2, 4)" in r.stdout, r.stdout


def test_what_the_examples_write_in_the_checkout_stays_out_of_git():
    """train --config configs/es_cartpole.ini writes cartpole_es.pol where it runs,
    the README's render and dump lines frames/ and graph.png, pip install ./python
    its build folders: none is left untracked."""
    if not shutil.which("git") or not os.path.exists(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout")
    written = ["cartpole_es.pol", "cartpole.pol", "frames/000000.png", "pendulum.gif", "graph.png", "cartpole.mp4",
               "python/build/lib/cartsim/__init__.py", "python/cartsim.egg-info/PKG-INFO"]
    ignored = subprocess.run(["git", "-C", ROOT, "check-ignore", "--no-index"] + written, capture_output=True,
                             text=True).stdout.split()
    assert sorted(ignored) == sorted(written)
    assert subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", "--no-index", "docs/cartpole_trained.gif"]
                          ).returncode != 0


def test_the_links_of_the_readme_and_docs_lead_to_files_and_headings():
    """The deep material moved to docs/: every relative link there and in the
    README reaches a file, and a #heading in it."""
    def anchors(path):
        with open(path) as f:
            return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                    for h in re.findall(r"^#+ (.*)$", f.read(), re.M)} | set(
                re.findall(r'<a id="([^"]+)">', open(path).read()))
    pages = [os.path.join(ROOT, "README.md")] + [os.path.join(ROOT, "docs", f)
                                                  for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")]
    broken = []
    for page in pages:
        with open(page) as f:
            text = f.read()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"\w+://", target):
                continue
            path, _, anchor = target.partition("#")
            where = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(where):
                broken.append("%s: %s" % (os.path.relpath(page, ROOT), target))
            elif anchor and where.endswith(".md") and anchor not in anchors(where):
                broken.append("%s: %s (no such heading)" % (os.path.relpath(page, ROOT), target))
    assert not broken, "\n".join(broken)

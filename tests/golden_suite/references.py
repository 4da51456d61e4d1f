"""The references of the environment suite (issue 27): which package runs
which environment, with which options, in which pinned venv. Read by
generate.py (the golden data) and bench/peers.py (the references' rollout
rates), so that both use the same references. Standard library only: it is
imported by the system python3 as well as inside the venvs."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_ROOT = os.path.join(ROOT, "build", "golden-suite")

# One venv per reference: gymnax 1.0.1 declares gymnasium<1.4, the toy text
# is Gymnasium 1.4.0's (python/tests/requirements.txt's pins).
VENVS = {
    "gymnasium": os.path.join(VENV_ROOT, "venv-gymnasium"),
    "gymnax": os.path.join(VENV_ROOT, "venv-gymnax"),
}
REQUIREMENTS = {name: os.path.join(HERE, "requirements-%s.txt" % name) for name in VENVS}

# (file stem, reference, id, options): one golden file (and one distribution
# file) per row. Options are gym.make keywords for Gymnasium and EnvParams
# fields for gymnax (the defaults where empty).
SUITE = [
    ("FrozenLake-v1", "gymnasium", "FrozenLake-v1", {}),
    ("FrozenLake-v1_is_slippery=False", "gymnasium", "FrozenLake-v1", {"is_slippery": False}),
    ("FrozenLake8x8-v1", "gymnasium", "FrozenLake8x8-v1", {}),
    ("FrozenLake8x8-v1_is_slippery=False", "gymnasium", "FrozenLake8x8-v1", {"is_slippery": False}),
    ("Taxi-v4", "gymnasium", "Taxi-v4", {}),
    ("Taxi-v4_is_rainy=True", "gymnasium", "Taxi-v4", {"is_rainy": True}),
    ("Taxi-v4_fickle_passenger=True", "gymnasium", "Taxi-v4", {"fickle_passenger": True}),
    ("Taxi-v4_is_rainy=True_fickle_passenger=True", "gymnasium", "Taxi-v4",
     {"is_rainy": True, "fickle_passenger": True}),
    ("CliffWalking-v1", "gymnasium", "CliffWalking-v1", {}),
    ("CliffWalkingSlippery-v1", "gymnasium", "CliffWalkingSlippery-v1", {}),
    ("Blackjack-v1", "gymnasium", "Blackjack-v1", {}),
    ("Blackjack-v1_sab=False", "gymnasium", "Blackjack-v1", {"sab": False}),
    ("Blackjack-v1_sab=False_natural=True", "gymnasium", "Blackjack-v1", {"sab": False, "natural": True}),
    ("Catch-bsuite", "gymnax", "Catch-bsuite", {}),
    ("DeepSea-bsuite", "gymnax", "DeepSea-bsuite", {}),
    ("DeepSea-bsuite_deterministic=False", "gymnax", "DeepSea-bsuite", {"deterministic": False}),
    ("MemoryChain-bsuite", "gymnax", "MemoryChain-bsuite", {}),
    ("UmbrellaChain-bsuite", "gymnax", "UmbrellaChain-bsuite", {}),
    ("DiscountingChain-bsuite", "gymnax", "DiscountingChain-bsuite", {}),
    ("Breakout-MinAtar", "gymnax", "Breakout-MinAtar", {}),
    ("Asterix-MinAtar", "gymnax", "Asterix-MinAtar", {}),
    ("Freeway-MinAtar", "gymnax", "Freeway-MinAtar", {}),
    ("SpaceInvaders-MinAtar", "gymnax", "SpaceInvaders-MinAtar", {}),
    ("FourRooms-misc", "gymnax", "FourRooms-misc", {}),
    ("MetaMaze-misc", "gymnax", "MetaMaze-misc", {}),
    ("PointRobot-misc", "gymnax", "PointRobot-misc", {}),
    ("BernoulliBandit-misc", "gymnax", "BernoulliBandit-misc", {}),
    ("GaussianBandit-misc", "gymnax", "GaussianBandit-misc", {}),
]

# The ids, each once, in the order above (the benchmark's rows).
SUITE_IDS = list(dict.fromkeys((ref, env_id) for _, ref, env_id, _ in SUITE))


def venv_python(name):
    return os.path.join(VENVS[name], "bin", "python")


def ensure_venv(name, log=None):
    """Create VENVS[name] with its pinned requirements unless it already holds
    exactly them; returns None, or why it could not."""
    venv, req = VENVS[name], REQUIREMENTS[name]
    stamp = os.path.join(venv, "cartsim-requirements.txt")
    with open(req) as f:
        wanted = f.read()
    try:
        with open(stamp) as f:
            if f.read() == wanted:
                return None
    except OSError:
        pass
    if log:
        log("golden-suite: creating %s from %s" % (os.path.relpath(venv, ROOT), os.path.relpath(req, ROOT)))
    r = subprocess.run([sys.executable, "-m", "venv", "--clear", venv], capture_output=True, text=True)
    if r.returncode:
        return "python3 -m venv failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    r = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--disable-pip-version-check",
                        "--no-deps", "-r", req], capture_output=True, text=True)
    if r.returncode:
        lines = [l for l in (r.stderr or r.stdout).strip().splitlines() if l.strip()]
        return "pip install -r %s failed: %s" % (os.path.relpath(req, ROOT), lines[-1] if lines else "?")
    with open(stamp, "w") as f:
        f.write(wanted)
    return None

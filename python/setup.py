"""Builds libcartsim.so with the checkout's Makefile (make -C ..) and puts it,
with cartsim.h, inside the package (cartsim/_lib/), so `pip install ./python`
needs no manual step. $CARTSIM_LIBRARY (and $CARTSIM_HEADER) name a library
built elsewhere instead."""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
HEADER = os.environ.get("CARTSIM_HEADER") or os.path.join(CHECKOUT, "sim", "cartsim.h")


def version():
    with open(HEADER) as f:
        return re.search(r'#define CS_VERSION_STRING "([^"]+)"', f.read()).group(1)


def library():
    if os.environ.get("CARTSIM_LIBRARY"):
        return os.environ["CARTSIM_LIBRARY"]
    if not os.path.exists(os.path.join(CHECKOUT, "Makefile")):
        raise SystemExit("cartsim: %s is not a cartsim checkout; build libcartsim.so and set CARTSIM_LIBRARY"
                         % CHECKOUT)
    subprocess.check_call(["make", "-C", CHECKOUT, "--no-print-directory", "-j2", "build/libcartsim.so"])
    return os.path.join(CHECKOUT, "build", "libcartsim.so")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "cartsim", "_lib")
        os.makedirs(target, exist_ok=True)
        shutil.copy(library(), os.path.join(target, "libcartsim.so"))
        shutil.copy(HEADER, os.path.join(target, "cartsim.h"))


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(version=version(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)

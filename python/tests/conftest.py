"""Shared fixtures: paths in the checkout, wherever pytest runs from."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # golden_replay


@pytest.fixture
def root():
    """root("envs/x.env"): the path in the checkout."""
    return lambda path: os.path.join(ROOT, path)

"""cartsim's pictures against Gymnasium's own render(), pixel by pixel, from the same states.

The five classic environments draw through the draw blocks of their .env files, which repeat
Gymnasium's render() arithmetic, and the canvas draws polygons, discs and lines by pygame's
rules. What cartsim does not do is anti-alias: Gymnasium outlines its polygons and discs with
gfxdraw.aapolygon and gfxdraw.aacircle and draws MountainCar's hill with pygame.draw.aalines.
So the documented tolerance (README, docs/viewer.md) is exactly that:

  * every pixel equals Gymnasium's frame drawn without anti-aliasing (those two outlines left
    out, the hill drawn by pygame.draw.lines, aalines' twin without the blending);
  * so against Gymnasium's own frame a pixel differs only where its anti-aliasing painted,
    which is at most 2% of a frame.

pygame comes from python/tests/requirements.txt (gymnasium[classic-control]'s dependency).
"""
import contextlib
import os

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
pygame = pytest.importorskip("pygame", reason="pygame draws Gymnasium's frames (pip install pygame)")
gymnasium = pytest.importorskip("gymnasium")
from pygame import gfxdraw               # noqa: E402

from cartsim.batch import Batch          # noqa: E402
from cartsim.frames import Renderer      # noqa: E402

MAX_ANTIALIASED = 0.02


@contextlib.contextmanager
def without_antialiasing():
    """Gymnasium's render() with its anti-aliased calls left out (aalines drawn aliased)."""
    saved = gfxdraw.aapolygon, gfxdraw.aacircle, pygame.draw.aalines
    gfxdraw.aapolygon = lambda *args, **kwargs: None
    gfxdraw.aacircle = lambda *args, **kwargs: None
    pygame.draw.aalines = lambda surface, color, closed, points, *rest, **kwargs: pygame.draw.lines(
        surface, color, closed, points)
    try:
        yield
    finally:
        gfxdraw.aapolygon, gfxdraw.aacircle, pygame.draw.aalines = saved


def gymnasium_frame(gid, state, attributes):
    env = gymnasium.make(gid, render_mode="rgb_array").unwrapped
    env.reset(seed=0)
    for name, value in attributes.items():
        setattr(env, name, value)
    env.state = np.array(state, dtype=np.float64)
    if hasattr(env, "last_u"):
        env.last_u = None           # no torque arrow: cartsim's state does not hold the last action
    frame = env.render()
    env.close()
    return frame


def cartsim_frames(name, states, params):
    batch = Batch(name, len(states), backend="interp", dtype="float64", params=params)
    batch.reset(0)
    batch.set_state(np.array(states, dtype=np.float64))
    renderer = Renderer(batch)
    frames = [renderer.rgb(i, 1, 1) for i in range(len(states))]
    batch.close()
    return frames


def differing(a, b):
    assert a.shape == b.shape
    return np.any(a != b, axis=2)


def describe(mask, ours, theirs):
    return ", ".join("(%d, %d): ours %s, Gymnasium's %s" % (x, y, tuple(ours[y, x]), tuple(theirs[y, x]))
                     for y, x in np.argwhere(mask)[:5])


def random_states(name, count, rng):
    if name == "cartpole":
        s = np.zeros((count, 4))
        s[:, 0] = rng.uniform(-2.6, 2.6, count)           # the cart, partly off the frame at the ends
        s[:, 2] = rng.uniform(-1.6, 1.6, count)           # the pole, up to nearly lying flat
        return s
    if name == "pendulum":
        return np.stack([rng.uniform(-9, 9, count), np.zeros(count)], axis=1)   # a spinning pendulum's angles
    if name.startswith("mountain_car"):
        return np.stack([rng.uniform(-1.2, 0.6, count), np.zeros(count)], axis=1)
    s = np.zeros((count, 4))                              # acrobot
    s[:, :2] = rng.uniform(-np.pi, np.pi, (count, 2))
    return s


CASES = [
    ("CartPole-v1", "cartpole", {}, {}),
    ("Pendulum-v1", "pendulum", {}, {}),
    ("MountainCar-v0", "mountain_car", {}, {}),
    ("MountainCarContinuous-v0", "mountain_car_continuous", {}, {}),
    ("Acrobot-v1", "acrobot", {}, {}),
    # overridden parameters show, as Gymnasium draws them when its attributes change
    ("CartPole-v1", "cartpole", {"length": 1.0}, {"length": 1.0}),
    ("MountainCar-v0", "mountain_car", {"goal_position": 0.3}, {"goal_position": 0.3}),
    ("Acrobot-v1", "acrobot", {"link_length_1": 1.5}, {"LINK_LENGTH_1": 1.5}),
]


@pytest.mark.parametrize("gid,name,params,attributes", CASES,
                         ids=["%s%s" % (c[1], "".join("-%s=%g" % kv for kv in c[2].items())) for c in CASES])
def test_frames_are_gymnasiums_but_for_antialiasing(gid, name, params, attributes):
    rng = np.random.default_rng(20260)
    states = random_states(name, 24, rng)
    ours = cartsim_frames(name, states, params)
    for state, frame in zip(states, ours):
        theirs = gymnasium_frame(gid, state, attributes)
        with without_antialiasing():
            aliased = gymnasium_frame(gid, state, attributes)
        off = differing(frame, aliased)
        assert not off.any(), "%s %s: %d pixels differ from Gymnasium's frame without anti-aliasing: %s" % (
            name, state, off.sum(), describe(off, frame, aliased))
        antialiased = differing(aliased, theirs)
        assert not (differing(frame, theirs) & ~antialiased).any()
        assert antialiased.sum() <= MAX_ANTIALIASED * antialiased.size, "%s %s: %d anti-aliased pixels" % (
            name, state, antialiased.sum())


def test_the_comparison_can_fail():
    """A picture that ignored an overridden parameter would fail: the long pole against
    Gymnasium's short one differs far from any anti-aliased pixel."""
    state = [0.0, 0.0, 0.3, 0.0]
    longer, = cartsim_frames("cartpole", np.array([state]), {"length": 1.0})
    with without_antialiasing():
        short = gymnasium_frame("CartPole-v1", state, {})
    assert differing(longer, short).sum() > 100

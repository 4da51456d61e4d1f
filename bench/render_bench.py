#!/usr/bin/env python3
"""Pictures before and after (bench/RESULTS.md, "Pictures"): how fast two trees draw.

    python3 bench/render_bench.py BASE_TREE [NEW_TREE] [--rounds 5] [--cpu 1]

Each tree must be built (`make all` in it). bench/render_bench.c is compiled against each
tree's library and viewer, then everything runs round-robin (base, new, base, new, ...),
pinned to one core with taskset, and the medians and their ratios are printed:

  * drawing alone: cs_render_rgb of 16 CartPoles tiled (2400x1600) and of one (600x400);
  * the viewer's whole loop, scripted on SDL's offscreen driver: 16 CartPoles in a 2400x1624
    window, so each tile is 600x400 (the issue's "16 environments at 600x400");
  * `cartsim render --env cartpole --steps 300 --out DIR`, the program writing PNG frames.

Each figure is given per second of wall time and per second of the run's CPU time (what one
core of its own would give while other work shares the machine). The load average is printed
first and last: the figures are ratios of one run.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build(tree, out):
    ldlibs = subprocess.run(["make", "-s", "-C", tree, "print-ldlibs"], capture_output=True, text=True,
                            check=True).stdout.split()
    sdl = subprocess.run(["sdl2-config", "--cflags", "--libs"], capture_output=True, text=True).stdout.split()
    cmd = (["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-DCS_HAVE_SDL2"] + ["-I" + os.path.join(tree, d) for d in
           ("", "jit", "sim", "agents", "train")] + [os.path.join(HERE, "render_bench.c"),
           os.path.join(tree, "build", "view", "view.o"), os.path.join(tree, "build", "libcartsim.a"), "-o", out]
           + ldlibs + sdl)
    subprocess.run(cmd, check=True)


def pinned(cpu, argv, env=None):
    return ["taskset", "-c", str(cpu)] + argv


def rate(cpu, argv):
    """(frames per second, per CPU second) of one render_bench run."""
    out = subprocess.run(pinned(cpu, argv), capture_output=True, text=True, check=True).stdout
    m = re.search(r": ([0-9.]+) frames/s, ([0-9.]+) per CPU second", out)
    return float(m.group(1)), float(m.group(2))


def render_rate(cpu, cartsim, frames_dir):
    """`cartsim render`'s PNG frames per second, of wall time and of its CPU time."""
    shutil.rmtree(frames_dir, ignore_errors=True)
    start, before = time.monotonic(), os.times()
    subprocess.run(pinned(cpu, [cartsim, "render", "--env", "cartpole", "--steps", "300", "--threads", "1",
                                "--out", frames_dir]), capture_output=True, check=True)
    after = os.times()
    used = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return 301 / (time.monotonic() - start), 301 / used


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new", nargs="?", default=os.path.dirname(HERE))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args()
    print("load before:", os.getloadavg())
    work = tempfile.mkdtemp(prefix="render-bench-")
    trees = {"base": os.path.abspath(args.base), "new": os.path.abspath(args.new)}
    bins = {}
    for name, tree in trees.items():
        bins[name] = os.path.join(work, "render_bench_" + name)
        build(tree, bins[name])
    tests = {
        "draw 16 CartPoles, 2400x1600 (frames/s)": lambda b, t: rate(args.cpu, [b, "frames", "cartpole", "16", "300"]),
        "draw 1 CartPole, 600x400 (frames/s)": lambda b, t: rate(args.cpu, [b, "frames", "cartpole", "1", "2000"]),
        "viewer, 16 CartPoles at 600x400 (frames/s)": lambda b, t: rate(args.cpu, [b, "view", "cartpole", "16",
                                                                                  "600", "2400", "1624"]),
        "cartsim render, CartPole PNG frames (frames/s)": lambda b, t: render_rate(
            args.cpu, os.path.join(t, "build", "cartsim"), os.path.join(work, "frames")),
    }
    results = {k: {"base": [], "new": []} for k in tests}
    for r in range(args.rounds):
        for what, run in tests.items():
            for name in ("base", "new"):
                results[what][name].append(run(bins[name], trees[name]))
        print("round %d done" % (r + 1), file=sys.stderr)
    print("load after:", os.getloadavg())
    print("| what | before | after | after / before | per CPU second: before | after | after / before |")
    print("|---|---|---|---|---|---|---|")
    for what, res in results.items():
        b, n = (statistics.median(r[0] for r in res[k]) for k in ("base", "new"))
        bc, nc = (statistics.median(r[1] for r in res[k]) for k in ("base", "new"))
        print("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |" % (what, b, n, n / b, bc, nc, nc / bc))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Golden data of the environment suite (issue 27), from the references' own code.

Run with the system python3 (`make golden-suite`): it makes the pinned venvs
of references.py under build/golden-suite/ (pip, from PyPI), then runs itself
inside each as a worker that writes, per row of references.SUITE,

  tests/golden_suite/STEM.jsonl      episodes, one JSON object per reset and per step
  tests/golden_suite/STEM.dist.json  the reference's own draws, counted over many samples

and finally check_coverage.py over the new files (it fails when a file misses
a branch) and replay_check.py (docs/suite.md written again in plain Python: it
fails when a record differs from what the document says). The layout of the
files is in README.md. Deterministic: the same pins give the same files.

  python3 tests/golden_suite/generate.py [--only STEM,...] [--samples 10000]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import references   # noqa: E402

SEED = 20260   # episode e's environment seed is SEED + e, its actions' generator SEED


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def worker(a):
    """Inside a reference's venv: write the files of the stems given."""
    if a.worker == "gymnasium":
        import toy_text as module
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import gymnax_envs as module
    rows = {stem: (env_id, options) for stem, ref, env_id, options in references.SUITE if ref == a.worker}
    for stem in a.only.split(","):
        env_id, options = rows[stem]
        t0 = time.time()
        module.self_check()
        summary = module.generate(stem, env_id, options, os.path.join(HERE, stem + ".jsonl"), SEED)
        module.distribution(stem, env_id, options, os.path.join(HERE, stem + ".dist.json"), SEED, a.samples)
        summary.update(file=stem, seconds=round(time.time() - t0, 1))
        print(json.dumps(summary), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated stems (default: every row of references.SUITE)")
    ap.add_argument("--samples", type=int, default=10000, help="samples per outcome in the distribution files")
    ap.add_argument("--worker", choices=sorted(references.VENVS))
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    wanted = [s for s in a.only.split(",") if s] or [stem for stem, _, _, _ in references.SUITE]
    unknown = set(wanted) - {stem for stem, _, _, _ in references.SUITE}
    if unknown:
        sys.exit("generate.py: no such file stem: %s" % ", ".join(sorted(unknown)))
    for ref in references.VENVS:
        stems = [stem for stem, r, _, _ in references.SUITE if r == ref and stem in wanted]
        if not stems:
            continue
        reason = references.ensure_venv(ref, log)
        if reason:
            sys.exit("generate.py: %s" % reason)
        env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0")
        r = subprocess.run([references.venv_python(ref), os.path.abspath(__file__), "--worker", ref,
                            "--only", ",".join(stems), "--samples", str(a.samples)], env=env)
        if r.returncode:
            sys.exit("generate.py: the %s worker failed (exit status %d)" % (ref, r.returncode))
    files = [os.path.join(HERE, stem + ".jsonl") for stem in wanted]
    coverage = subprocess.run([sys.executable, os.path.join(HERE, "check_coverage.py")] + files)
    replay = subprocess.run([sys.executable, os.path.join(HERE, "replay_check.py")] + files)
    sys.exit(coverage.returncode or replay.returncode)


if __name__ == "__main__":
    main()

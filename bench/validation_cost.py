"""Validation cost: seconds per check and per task, for the bundled tasks and a task of each family.

Each task is validated in full (every check, ``all_checks``; image cached, no recorded verdict) in a fresh
process, so that what a user's ``autoenv validate`` pays is what is measured. With ``--against DIR`` (another
checkout of autoenv, e.g. ``git worktree add /tmp/prev HEAD~1``) each task is validated by that checkout too, one
right after the other on the same machine, and the ratio is printed: the side-by-side measurement of a change.

The seconds of a check are those of the trials it judges (oracle: its repeats summed; tamper: the adversary and
its diagnosis runs; partial, nop: their trial; leakage: the scans), so they add up to more than the wall time
when trials run side by side.

Run: .venv/bin/python bench/validation_cost.py [--against DIR] [--tasks NAME,...] [--families/--no-families]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.registry import FAMILIES  # noqa: E402
from autoenv.proposer.models import SeedCase  # noqa: E402
from bench._common import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CHECKS = ("structure", "build", "oracle", "nop", "leakage", "tamper", "partial")

#: Validates one task with the autoenv found first on sys.path and prints its seconds as JSON. Every check runs:
#: ``ValidationSettings(all_checks=True)`` since the settings travel whole, the keyword ``all_checks`` before; older
#: checkouts ran every check anyway.
ONE = """
import inspect, json, sys, time
sys.path.insert(0, sys.argv[1])
from autoenv.trials.runner import quiet_harbor_logs
from autoenv.validate.validation import avalidate_task, validate_task
quiet_harbor_logs()
params = inspect.signature(avalidate_task).parameters
if "settings" in params:
    from autoenv.validate.validation import ValidationSettings
    args, extra = (ValidationSettings(all_checks=True),), {}
else:
    args, extra = (), ({"all_checks": True} if "all_checks" in params else {})
started = time.perf_counter()
report = validate_task(sys.argv[2], *args, record=False, trials_dir=sys.argv[3], **extra)
print(json.dumps({"wall": time.perf_counter() - started, "valid": report.valid, "cached": report.cached,
                  "checks": {c.name: c.seconds for c in report.checks}}))
"""


def family_tasks(root: Path) -> list[Path]:
    """One task of each family, drafted from a seed case of its own (fixed seed)."""
    cases = [
        SeedCase(id=f"bench-{name}", task="t", failure_mode="t", target_skill="t", family=name) for name in FAMILIES
    ]
    return [FAMILIES[c.family].draft(c, random.Random(7)).write(root) for c in sorted(cases, key=lambda c: c.id)]


def validate_with(checkout: Path, task: Path, trials: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", ONE, str(checkout), str(task), str(trials)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"validating {task.name} with {checkout} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result.get("cached"):
        raise SystemExit(f"{task}: {checkout} returned a recorded verdict, not a validation")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another autoenv checkout to measure side by side")
    parser.add_argument("--tasks", default="", help="bundled task names, comma-separated (default: all)")
    parser.add_argument("--families", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    bundled = sorted(p for p in (REPO / "examples" / "tasks").iterdir() if (p / "task.toml").is_file())
    if args.tasks:
        bundled = [p for p in bundled if p.name in args.tasks.split(",")]
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # without recorded verdicts (.autoenv/): a recorded one would be returned instead of validating
        no_records = shutil.ignore_patterns(".autoenv")
        tasks = [Path(shutil.copytree(p, root / "bundled" / p.name, ignore=no_records)) for p in bundled]
        if args.families:
            tasks += family_tasks(root / "families")
        for task in tasks:  # warm the image cache: a build is not what is measured
            validate_with(REPO, task, root / "warm")
        head = f"{'task':<34} {'wall s':>7} " + " ".join(f"{c[:8]:>8}" for c in CHECKS)
        print(head + (f" {'before s':>8} {'speed-up':>8}" if args.against else ""))
        totals = [0.0, 0.0]
        for task in tasks:
            fresh = root / "copies" / task.name
            shutil.copytree(task, fresh, ignore=shutil.ignore_patterns(".autoenv"))
            now = validate_with(REPO, fresh, root / "trials")
            line = f"{task.name[:34]:<34} {now['wall']:>7.1f} " + " ".join(
                f"{now['checks'].get(c, 0.0):>8.1f}" for c in CHECKS
            )
            if not now["valid"]:
                line += "  (not valid)"
            totals[0] += now["wall"]
            if args.against:
                before = validate_with(args.against, fresh, root / "trials-before")
                totals[1] += before["wall"]
                line += f" {before['wall']:>8.1f} {before['wall'] / now['wall']:>7.2f}x"
            print(line, flush=True)
        summary = f"all {len(tasks)} tasks: {totals[0]:.1f}s, {totals[0] / len(tasks):.1f}s per task"
        if args.against:
            summary += f"; before {totals[1]:.1f}s: {totals[1] / totals[0]:.2f}x faster now"
        print(summary)


if __name__ == "__main__":
    main()

"""Validation cost per environment, and how it grows with the number of tests.

A generated task is validated by several trials (oracle x R, nop, adversary);
this measures the wall time of a full validation of one bundled task and of
synthetic tasks whose verifier runs 1, 10 and 100 pytest tests.
Run: .venv/bin/python bench/validation_cost.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.trials.runner import quiet_harbor_logs  # noqa: E402
from autoenv.validate.validation import validate_task  # noqa: E402
from bench._common import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def task_with_tests(root: Path, n: int) -> Path:
    task = root / f"tests-{n}"
    shutil.copytree(REPO / "examples" / "tasks" / "fix-median-bug", task)
    body = "\n".join(
        f"def test_case_{i}():\n    from stats_utils import median\n    assert median([{i + 2}, {i}, {i + 1}]) == "
        f"{i + 1}\n"
        for i in range(n)
    )
    (task / "tests" / "test_outputs.py").write_text("import sys\nsys.path.insert(0, '/app')\n" + body)
    return task


def timed(task: Path, trials: Path) -> tuple[float, bool]:
    start = time.perf_counter()
    report = validate_task(task, force=True, trials_dir=trials)
    return time.perf_counter() - start, report.valid


def main() -> None:
    quiet_harbor_logs()
    with tempfile.TemporaryDirectory() as tmp:
        root, trials = Path(tmp), Path(tmp) / "trials"
        bundled = root / "fix-median-bug"
        shutil.copytree(REPO / "examples" / "tasks" / "fix-median-bug", bundled)
        timed(bundled, trials)  # warm the image cache
        base, valid = timed(bundled, trials)
        print(f"machine: {machine()}")
        print(f"full validation of fix-median-bug: {base:.1f}s (valid={valid})")
        times = {}
        for n in (1, 10, 100):
            times[n], valid = timed(task_with_tests(root, n), trials)
            print(f"{n:>3} tests: {times[n]:.1f}s (valid={valid})")
        print(f"growth 100 vs 1 tests: {times[100] / times[1]:.2f}x")


if __name__ == "__main__":
    main()

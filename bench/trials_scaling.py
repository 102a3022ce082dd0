"""Throughput of `autoenv trials` with 1 and 2 workers on the bundled tasks.

Run: .venv/bin/python bench/trials_scaling.py
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.taskfmt.check import find_tasks  # noqa: E402
from autoenv.trials.runner import arun_many, quiet_harbor_logs  # noqa: E402
from bench._common import machine  # noqa: E402

TASKS = Path(__file__).resolve().parents[1] / "examples" / "tasks"


def main() -> None:
    quiet_harbor_logs()
    tasks = find_tasks(TASKS)
    trials = Path(tempfile.mkdtemp())
    asyncio.run(arun_many([(t, "oracle") for t in tasks], n_concurrent=2, trials_dir=trials))  # warm image caches
    rates = {}
    for workers in (1, 2):
        start = time.perf_counter()
        outcomes = asyncio.run(arun_many([(t, "oracle") for t in tasks], n_concurrent=workers, trials_dir=trials))
        elapsed = time.perf_counter() - start
        rates[workers] = len(outcomes) / elapsed
        print(
            f"{workers} worker(s): {len(outcomes)} trials in {elapsed:.1f}s = {rates[workers]:.2f} trials/s "
            f"(passed {sum(o.passed for o in outcomes)})"
        )
    print(f"machine: {machine()}")
    print(f"scaling 2 vs 1 workers: {rates[2] / rates[1]:.2f}x")
    shutil.rmtree(trials, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Trial overhead of the local sandbox against the physical floor.

The floor is the same oracle script run directly as a subprocess on a copy of
the task's files (no namespaces, no Harbor). The ratio is what a trial costs
on top of the work itself.   Run: .venv/bin/python bench/trial_overhead.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import best_of, machine  # noqa: E402
from autoenv.trials.runner import quiet_harbor_logs, run_trial  # noqa: E402

TASK = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "fix-median-bug"


def direct() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app"
        shutil.copytree(TASK / "environment" / "app", app)
        script = (TASK / "solution" / "solve.sh").read_text().replace("/app", str(app))
        subprocess.run(["bash", "-c", script], check=True, capture_output=True)


def main() -> None:
    quiet_harbor_logs()
    trials = Path(tempfile.mkdtemp())
    run_trial(TASK, "oracle", trials_dir=trials)  # warm the image cache
    floor = best_of(5, direct)
    sandboxed = best_of(5, lambda: run_trial(TASK, "oracle", trials_dir=trials))
    print(f"machine: {machine()}")
    print(f"direct oracle script (floor): {floor * 1000:.0f} ms")
    print(f"local-sandbox Harbor trial (build cached, incl. verifier): {sandboxed * 1000:.0f} ms")
    print(f"overhead ratio: {sandboxed / floor:.1f}x")
    shutil.rmtree(trials, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Per-trial cost: the local backend against the bare script and Harbor's Docker environment, side by side.

For each task, in one run on one machine:
- bare: the oracle's solve.sh and the task's pytest file run directly on a copy of
  the task's files (no sandbox, no Harbor): the work itself, the physical floor;
- local: a Harbor trial on ``--env local`` in-process (image cached): container
  start, oracle, tests upload, verifier, teardown;
- docker: the same trial on Harbor's own docker environment (image cached), when a
  Docker daemon answers. Bundled tasks are ``no-network``, which Harbor's docker
  environment cannot enforce offline, so the docker run uses a copy set to
  ``network_mode = "public"`` (the local column is measured on that copy too).

Prints each time and the ratios local/bare and docker/local.
Run: .venv/bin/python bench/trial_overhead.py [TASK ...]
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.trials.runner import quiet_harbor_logs, run_trial  # noqa: E402
from bench._common import best_of, machine  # noqa: E402

TASKS = Path(__file__).resolve().parents[1] / "examples" / "tasks"
DEFAULT = ["fix-median-bug", "log-parser-cli", "csv-statistic"]


def bare(task: Path) -> None:
    """solve.sh, then the task's own pytest file, on a private copy with /app rewritten."""
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app"
        shutil.copytree(task / "environment" / "app", app)
        script = (task / "solution" / "solve.sh").read_text().replace("/app", str(app))
        subprocess.run(["bash", "-c", script], check=True, capture_output=True, cwd=app)
        tests = Path(tmp) / "tests"
        tests.mkdir()
        for test in (task / "tests").glob("test_*.py"):
            (tests / test.name).write_text(test.read_text().replace("/app", str(app)))
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
            capture_output=True,
            text=True,
            cwd=app,
        )
        assert out.returncode == 0, out.stdout[-500:]


def public_copy(task: Path, root: Path) -> Path:
    copy = root / task.name
    shutil.copytree(task, copy)
    toml = copy / "task.toml"
    toml.write_text(re.sub(r'network_mode\s*=\s*"no-network"', 'network_mode = "public"', toml.read_text()))
    return copy


def docker_available() -> str | None:
    try:
        info = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return info.stdout.strip() if info.returncode == 0 else None


def timed_trial(task: Path, trials: Path, env: str) -> float:
    def once() -> None:
        outcome = run_trial(task, "oracle", env=env, trials_dir=trials)
        assert outcome.reward == 1.0, outcome

    once()  # build and cache the image
    return best_of(3, once)


def main() -> None:
    quiet_harbor_logs()
    names = sys.argv[1:] or DEFAULT
    docker = docker_available()
    print(f"machine: {machine()}; docker: {docker or 'no daemon (docker column skipped)'}")
    print(f"{'task':<22} {'bare':>8} {'local':>8} {'docker':>8} {'local/bare':>11} {'docker/local':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        trials = Path(tmp) / "trials"
        for name in names:
            task = public_copy(TASKS / name, Path(tmp))
            floor = best_of(3, lambda task=task: bare(task))
            local = timed_trial(task, trials, "local")
            dock = timed_trial(task, trials, "docker") if docker else None
            print(
                f"{name:<22} {floor * 1000:>6.0f}ms {local * 1000:>6.0f}ms "
                f"{(f'{dock * 1000:.0f}ms') if dock else '-':>8} {local / floor:>10.2f}x "
                f"{(f'{dock / local:.1f}x') if dock else '-':>13}"
            )


if __name__ == "__main__":
    main()

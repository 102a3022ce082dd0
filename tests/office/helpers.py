"""Shared helpers of the office/web task tests: run a task's own verifier and solution on the host.

The task files read ``OFFICE_TASK_DIR`` (default ``/app``), so the same
``tests/test_outputs.py`` and ``solution/solve.py`` that run in the sandbox
can run here against a copy of ``environment/app``: fast checks of verifier
logic without a sandbox (the trials in test_office_trials.py cover the real
thing).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "tasks"


def app_copy(task: Path, dest: Path) -> Path:
    """A copy of the task's environment/app, prepared like the Dockerfile does (web app: database created)."""
    app = dest / "app"
    shutil.copytree(task / "environment" / "app", app)
    if (app / "server.py").exists():
        subprocess.run([sys.executable, str(app / "server.py"), "--init"], check=True, capture_output=True)
        (app / "data" / "seed.json").unlink()
    return app


def _env(app: Path) -> dict[str, str]:
    # no __pycache__ next to the bundled tasks' files
    return {**os.environ, "OFFICE_TASK_DIR": str(app), "PYTHONDONTWRITEBYTECODE": "1"}


def run_solution(task: Path, app: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(task / "solution" / "solve.py")],
        env=_env(app),
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_verifier(task: Path, app: Path) -> subprocess.CompletedProcess:
    """The task's tests/test_outputs.py against ``app``; returncode 0 means reward 1."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            str(task / "tests"),
            "--noconftest",
            "--import-mode=append",
            "-rA",
            str(task / "tests" / "test_outputs.py"),
        ],
        cwd=task / "tests",
        env=_env(app),
        capture_output=True,
        text=True,
        timeout=300,
    )


def case_of(task: Path) -> dict:
    """The CASE constants the generator put into the task's verifier."""
    tree = ast.parse((task / "tests" / "test_outputs.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "CASE":
            return ast.literal_eval(node.value)
    raise AssertionError(f"{task}: no CASE in tests/test_outputs.py")


def verdicts(result: subprocess.CompletedProcess) -> dict[str, str]:
    """{test name: PASSED/FAILED/ERROR} from a run_verifier result (pytest -rA summary)."""
    out = {}
    for line in result.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) >= 2 and parts[0] in ("PASSED", "FAILED", "ERROR") and "::" in parts[1]:
            out[parts[1].split("::", 1)[1]] = parts[0]
    return out

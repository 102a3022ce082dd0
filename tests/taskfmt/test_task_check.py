"""`autoenv task check` rejects broken tasks with one clear line per problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import bundled_tasks, write_task

AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]


def check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*AUTOENV, "task", "check", *map(str, paths)], capture_output=True, text=True, timeout=120)


def test_well_formed_task_passes(tmp_path):
    out = check(write_task(tmp_path, "good"))
    assert out.returncode == 0, out.stdout + out.stderr


BROKEN = {
    "missing-toml": (lambda t: (t / "task.toml").unlink(), "task.toml", "Missing task configuration"),
    "malformed-toml": (lambda t: (t / "task.toml").write_text("schema_version = [\n"), "task.toml", "Malformed TOML"),
    "bad-field-type": (lambda t: (t / "task.toml").write_text('schema_version = "1.4"\n[agent]\ntimeout_sec = "soon"\n'), "task.toml", "agent.timeout_sec"),
    "no-solution": (lambda t: (t / "solution" / "solve.sh").unlink(), "solve.sh", "reference solution missing"),
    "no-test-sh": (lambda t: (t / "tests" / "test.sh").unlink(), "task.toml", "does not contain tests/test.sh"),
    "no-reward": (lambda t: (t / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n"), "test.sh", "never writes /logs/verifier/reward"),
    "empty-instruction": (lambda t: (t / "instruction.md").write_text("  \n"), "instruction.md", "instruction"),
    "no-from": (lambda t: (t / "environment" / "Dockerfile").write_text("RUN echo hi\n"), "Dockerfile", "no FROM instruction"),
    "no-environment": (lambda t: (t / "environment" / "Dockerfile").unlink(), "Dockerfile", "no Dockerfile"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_task_is_rejected_with_a_clear_line(tmp_path, name):
    breaker, where, fragment = BROKEN[name]
    task = write_task(tmp_path, name)
    breaker(task)
    out = check(task)
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if fragment in line]
    assert lines, out.stdout
    assert where in lines[0] and str(task) in lines[0]


def test_not_a_directory_and_missing_path(tmp_path):
    file = tmp_path / "plain.txt"
    file.write_text("x")
    out = check(file, tmp_path / "absent")
    assert out.returncode == 1
    assert "not a task directory" in out.stdout and "no such file or directory" in out.stdout
    assert "Traceback" not in out.stderr


def test_bundled_tasks_are_well_formed():
    tasks = bundled_tasks()
    if not tasks:
        pytest.skip("no bundled tasks")
    out = check(*tasks)
    assert out.returncode == 0, out.stdout

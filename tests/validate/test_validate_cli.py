"""``autoenv validate`` and ``autoenv calibrate`` as a user runs them: exit codes, tables, JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs_namespaces

HERE = Path(__file__).parent
AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]

pytestmark = [needs_namespaces, pytest.mark.slow]


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*AUTOENV, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_validate_valid_task_json_then_cached(tmp_path):
    task = shutil.copytree(HERE / "good" / "sum-numbers", tmp_path / "sum-numbers")
    result = run("validate", task, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] and [c["name"] for c in report["checks"]] == [
        "structure",
        "build",
        "oracle",
        "deterministic",
        "nop",
        "leakage",
        "tamper",
        "partial",
        "timeouts",
    ]
    assert all(c["passed"] and c["evidence"] is not None for c in report["checks"])
    again = run("validate", task, cwd=tmp_path)
    assert again.returncode == 0 and "recorded verdict" in again.stderr


def test_validate_invalid_task_exits_1_with_feedback(tmp_path):
    task = shutil.copytree(HERE / "flawed" / "oracle-fails", tmp_path / "oracle-fails")
    result = run("validate", task, cwd=tmp_path)
    assert result.returncode == 1
    assert "oracle" in result.stderr and "FAIL" in result.stderr
    assert "does not pass its own tests" in result.stderr
    missing = run("validate", tmp_path / "nope", cwd=tmp_path)
    assert missing.returncode == 1 and "structure" in missing.stderr


def test_calibrate_reports_rate_interval_and_verdict(tmp_path):
    task = shutil.copytree(HERE / "good" / "sum-numbers", tmp_path / "sum-numbers")
    result = run("calibrate", task, "--solver", "coin:p=0.5", "--rollouts", "6", "--json", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert result.returncode == (0 if data["accepted"] else 1)
    assert data["n"] == 6 and 0 <= data["ci_low"] <= data["pass_rate"] <= data["ci_high"] <= 1
    human = run("calibrate", task, "--solver", "oracle", "--rollouts", "2", "--band", "0.2,0.8", cwd=tmp_path)
    assert human.returncode == 1 and "Wilson" in human.stderr and "too easy" in human.stderr
    bad = run("calibrate", task, "--solver", "coin:p", "--rollouts", "2", cwd=tmp_path)
    assert bad.returncode == 1 and "key=value" in bad.stderr
    bad_band = run("calibrate", task, "--solver", "oracle", "--rollouts", "2", "--band", "0.9,0.1", cwd=tmp_path)
    assert bad_band.returncode == 1 and "LO <= HI" in bad_band.stderr

"""``autoenv validate`` and ``autoenv calibrate`` as a user runs them: exit codes, tables, JSON."""

from __future__ import annotations

import json
import os
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
        "solvable",
        "inputs",
        "oracle",
        "deterministic",
        "nop",
        "leakage",
        "tamper",
        "contradictions",
        "partial",
        "timeouts",
        "probes",
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


def _dataset(root: Path, names: list[str]) -> Path:
    root.mkdir()
    for name in names:
        src = HERE / "good" / name if (HERE / "good" / name).is_dir() else HERE / "flawed" / name
        shutil.copytree(src, root / name, ignore=shutil.ignore_patterns(".autoenv"))
    return root


def test_a_dataset_audit_sums_up_records_every_verdict_and_the_report_shows_it(tmp_path):
    data = _dataset(tmp_path / "data", ["sum-numbers", "nop-passes", "oracle-fails"])
    broken = shutil.copytree(data / "sum-numbers", data / "broken-toml")
    (broken / "task.toml").write_text('[verifier]\ntimeout_sec = "soon"\n')
    db = tmp_path / "audit.db"
    result = run("validate", data, "-n", "2", "--db", db, "--json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # not every task is valid
    audit = json.loads(result.stdout)
    assert audit["summary"] == {
        "tasks": 4,
        "valid": 1,
        "invalid": 3,
        "undetermined": 0,
        "undetermined_by_reason": {},
        "not_validated": 0,
        "recorded_before": 0,
        "failures_by_check": {"nop": 1, "oracle": 1, "structure": 1},
    }, audit["summary"]
    by_name = {e["task_name"]: e for e in audit["entries"]}
    assert by_name["sum-numbers"]["valid"] and by_name["broken-toml"]["failed"] == ["structure"]
    # the terminal view: the same numbers, a table of checks, the worst offenders
    table = run("validate", data, "-n", "2", "--db", db, cwd=tmp_path)
    assert table.returncode == 1
    text = " ".join(table.stderr.split())  # rich wraps lines at the console's width
    assert "4 tasks, 1 valid, 3 invalid, 0 undetermined" in text and "4 verdicts recorded before" in text
    assert "failures by check" in text and "worst offenders" in text
    # every verdict is in the store, and `autoenv report` has the audit section
    page = run("report", "--db", db, "--out", tmp_path / "report", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "report" / "index.html").read_text()
    assert "4 tasks with a verdict: 1 valid, 3 not valid" in html
    assert "<td>oracle-fails</td><td>oracle</td>" in html


def test_a_killed_audit_resumes_without_running_finished_tasks_again(tmp_path):
    import os
    import signal
    import time

    data = _dataset(tmp_path / "data", ["sum-numbers", "nop-passes", "exit0-stub-passes"])
    first = data / "exit0-stub-passes"  # tasks are validated in name order, one at a time with -n 1
    proc = subprocess.Popen(
        [*AUTOENV, "validate", str(data), "-n", "1", "--db", str(tmp_path / "a.db")],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while not (first / ".autoenv" / "validation.json").is_file() and time.monotonic() < deadline:
        assert proc.poll() is None, "the audit ended before it was killed"
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (first / ".autoenv" / "validation.json").is_file()
    trials_before = {p.name for p in (tmp_path / "runs" / "validate").glob("exit0-stub-passes-*/*")}
    result = run("validate", data, "-n", "1", "--db", tmp_path / "a.db", "--json", cwd=tmp_path)
    audit = json.loads(result.stdout)
    by_name = {e["task_name"]: e for e in audit["entries"]}
    assert by_name["exit0-stub-passes"]["cached"] and not by_name["sum-numbers"]["cached"]
    assert by_name["exit0-stub-passes"]["failed"] == ["tamper"] and by_name["sum-numbers"]["valid"]
    # and no trial of the finished task ran again
    assert {p.name for p in (tmp_path / "runs" / "validate").glob("exit0-stub-passes-*/*")} == trials_before


def test_an_audit_on_ray_gives_the_verdicts_the_local_audit_gives(tmp_path):
    """--ray: each validation is a Ray task (an in-process cluster here); the verdicts are the same."""
    pytest.importorskip("ray")
    import asyncio

    from autoenv.trials.cluster import ray_init
    from autoenv.validate.audit import aaudit

    data = _dataset(tmp_path / "data", ["sum-numbers", "nop-passes"])
    ray = ray_init("local", num_cpus=2)
    try:
        audit = asyncio.run(
            aaudit(sorted(data.iterdir()), dataset=data, jobs=2, ray_address="local", trials_dir=tmp_path / "trials")
        )
    finally:
        ray.shutdown()
    assert [(e.task_name, e.valid, e.failed) for e in audit.entries] == [
        ("nop-passes", False, ["nop"]),
        ("sum-numbers", True, []),
    ]
    assert all((Path(e.task) / ".autoenv" / "validation.json").is_file() for e in audit.entries)


def test_a_resumed_audit_runs_a_task_again_after_a_checks_code_changed(tmp_path):
    """The records key on a hash of the checks' code (``CHECKS_VERSION``): an audit resumed with the same code
    reuses a verdict; resumed after an edit to a check's module, it validates the task again."""
    import autoenv

    src = Path(shutil.copytree(Path(autoenv.__file__).parent, tmp_path / "src" / "autoenv"))
    env = {**os.environ, "PYTHONPATH": str(src.parent)}
    data = _dataset(tmp_path / "data", ["nop-passes"])

    def audit() -> dict:
        result = subprocess.run(
            [*AUTOENV, "validate", str(data), "-n", "1", "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env=env,
        )
        assert result.returncode == 1, result.stderr  # nop-passes is not valid
        (entry,) = json.loads(result.stdout)["entries"]
        assert entry["failed"] == ["nop"], entry
        return entry

    assert not audit()["cached"]
    assert audit()["cached"]  # same code, same content: the recorded verdict
    nop = src / "validate" / "checks" / "nop.py"
    nop.write_text(nop.read_text() + "\n# judged differently from here on\n")
    assert not audit()["cached"]  # the check's code changed: the task is validated again

"""The validator against a reviewer: tasks in the shapes public Harbor tasks have, each labelled.

``reviewed/labels.toml`` holds, for every task in ``reviewed/``, the verdict a careful reviewer
gives and why. Each task is validated for real (builds, trials, the adversary, the partial solution)
and the validator must agree: the verdict, exactly the failing checks the reviewer names, the
phrase the feedback must show, and whether warnings and notes (findings that must not make a sound
task invalid) are reported. The agreement is recorded in the README.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from autoenv.taskfmt.check import Level
from autoenv.validate.validation import ValidationSettings, validate_task
from tests.conftest import needs_namespaces

HERE = Path(__file__).parent / "reviewed"
LABELS: dict[str, dict] = tomllib.loads((HERE / "labels.toml").read_text())

pytestmark = [needs_namespaces, pytest.mark.slow]


def test_every_task_is_labelled():
    tasks = {p.name for p in HERE.iterdir() if p.is_dir()}
    assert tasks == set(LABELS), "every reviewed task needs a label (and every label a task)"
    assert len(tasks) >= 20
    verdicts = [label["verdict"] for label in LABELS.values()]
    assert verdicts.count("valid") >= 8 and verdicts.count("invalid") >= 8


@pytest.mark.parametrize("name", sorted(LABELS))
def test_validator_agrees_with_the_reviewer(name, tmp_path):
    label = LABELS[name]
    task = Path(shutil.copytree(HERE / name, tmp_path / name))
    # every check runs (the reviewer names every check a task fails, not the first stage's)
    report = validate_task(
        task,
        ValidationSettings(oracle=not label.get("no_oracle", False), all_checks=True),
        trials_dir=tmp_path / "trials",
    )
    failed = sorted(c.name for c in report.failed)
    table = "\n".join(f"{c.name}: {c.status}: {c.summary}" for c in report.checks)
    # what validation can say on this machine: the reviewer's verdict, or "undetermined" where it cannot decide
    assert report.task_name == name
    expected = label.get("here", label["verdict"])
    assert report.verdict == expected, f"{name}: {label['why']}\n{table}\n{report.feedback()}"
    assert report.valid == (expected == "valid")
    assert failed == sorted(label.get("fails", [])), (
        f"{name}: failed {failed}, the reviewer says {label.get('fails', [])}\n{table}"
    )
    if "needle" in label:
        assert label["needle"] in report.feedback(), f"{name}: feedback lacks {label['needle']!r}:\n{report.feedback()}"
    for level, key in ((Level.WARNING, "warnings"), (Level.NOTE, "notes")):
        assert bool(report.findings(level)) == label.get(key, False), f"{name}: {level}s {report.findings(level)}"
    if "strict_verdict" in label:
        strict = validate_task(
            task,
            ValidationSettings(oracle=not label.get("no_oracle", False), strict=True, all_checks=True),
            trials_dir=tmp_path / "strict",
        )
        assert strict.valid == (label["strict_verdict"] == "valid"), strict.feedback()
        assert [c.name for c in strict.failed] == ["structure"], strict.feedback()


def test_a_task_without_solution_is_invalid_unless_validated_without_oracle(tmp_path):
    # a sound bundled task with its solution removed (a dataset that ships none)
    source = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "csv-statistic"
    no_solution = shutil.ignore_patterns("solution", ".autoenv")
    task = Path(shutil.copytree(source, tmp_path / "csv-statistic", ignore=no_solution))
    report = validate_task(task, trials_dir=tmp_path / "trials")
    assert not report.valid
    assert [c.name for c in report.failed] == ["structure"], report.feedback()
    assert "--no-oracle" in report.feedback()
    # by default validation stops there; with --all every check that needs no solution still runs
    assert {c.status for c in report.checks if c.name != "structure"} == {"skip"}
    report = validate_task(task, ValidationSettings(all_checks=True), trials_dir=tmp_path / "trials")
    assert [c.name for c in report.failed] == ["structure"], report.feedback()
    assert {c.name: c.status for c in report.checks if c.name in ("build", "nop", "leakage", "tamper")} == {
        "build": "pass",
        "nop": "pass",
        "leakage": "pass",
        "tamper": "pass",
    }
    assert all(
        "oracle not checked" in report.check(n).summary for n in ("oracle", "deterministic", "partial", "timeouts")
    )
    # with --no-oracle: no flaw found, solvability unknown ("undetermined", never "valid"); --strict: invalid
    report = validate_task(task, ValidationSettings(oracle=False), trials_dir=tmp_path / "trials")
    assert report.verdict == "undetermined" and not report.valid, report.feedback()
    assert [u.kind for u in report.undetermined] == ["no-solution"]
    assert "solvability unknown" in report.feedback()
    strict = validate_task(task, ValidationSettings(oracle=False, strict=True), trials_dir=tmp_path / "trials")
    assert strict.verdict == "invalid" and [u.kind for u in strict.undetermined] == ["no-solution"]

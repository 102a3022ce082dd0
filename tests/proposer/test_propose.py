"""The three methods with the scripted proposer, through the real validator, calibrator and sandboxes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposer_helpers import bundled_seed_cases, needs_sandbox, seed_case
from typer.testing import CliRunner

from autoenv.cli.main import app
from autoenv.families.registry import family_for
from autoenv.proposer.models import ProposeSummary, SeedCase
from autoenv.proposer.propose import propose
from autoenv.validate.validation import validate_task

pytestmark = needs_sandbox
runner = CliRunner()


def run(case: SeedCase, dirs: dict[str, Path], method: str, **kwargs) -> ProposeSummary:
    kwargs.setdefault("attempts", 1)
    return propose(case, method=method, policy="scripted", out_dir=dirs["out"], workspace=dirs["workspace"], **kwargs)


def kinds(summary: ProposeSummary) -> set[str]:
    return {a.kind for r in summary.records for a in r.actions}


@pytest.mark.slow
def test_prompt_writes_an_accepted_task_that_validates_on_its_own(dirs, tmp_path):
    summary = run(seed_case("csv-weighted-stats"), dirs, "prompt", flaw_rate=0.0)
    assert summary.attempts == 1 and summary.valid == 1 and summary.calibrated == 1
    record = summary.records[0]
    assert record.accepted and record.reward == 1.0 and record.rounds == 1 and 0 < record.pass_rate < 1
    task = Path(summary.accepted_tasks[0])
    assert (
        task.parent == dirs["out"].resolve() and summary.files_per_accepted == [record.n_files] and record.n_files >= 6
    )
    assert {"Read", "Build", "Write", "Test"} <= kinds(summary)
    # a fresh validation (no recorded verdict), as `autoenv validate` runs it
    result = runner.invoke(app, ["validate", str(task), "--force", "--trials-dir", str(tmp_path / "v")])
    assert result.exit_code == 0, result.output
    memory = [json.loads(line) for line in (dirs["workspace"] / "memory" / "attempts.jsonl").read_text().splitlines()]
    assert memory[-1]["task"] == task.name and memory[-1]["calibrated"] is True


def test_prompt_keeps_a_rejected_attempt_with_its_reason(dirs):
    summary = run(seed_case("csv-weighted-stats"), dirs, "prompt", flaw_rate=1.0, seed=1)
    record = summary.records[0]
    assert not record.valid and not record.accepted and record.reward == 0.0 and summary.accepted_tasks == []
    assert record.reason and record.reason.startswith("invalid (") and "[" in record.reason
    kept = dirs["out"] / "rejected" / Path(record.task_dir).name
    assert (kept / "task.toml").is_file() and "## Reason" in (kept / "REJECTED.md").read_text()
    assert (Path(record.task_dir) / ".autoenv" / "validation.json").is_file(), (
        "the validator's evidence stays with the task"
    )
    entry = json.loads((dirs["workspace"] / "memory" / "attempts.jsonl").read_text().splitlines()[-1])
    assert entry["valid"] is False and entry["reason"] == record.reason


@pytest.mark.slow
def test_feedback_repairs_what_validation_reports(dirs):
    summary = run(seed_case("csv-weighted-stats"), dirs, "feedback", flaw_rate=1.0, seed=1)
    record = summary.records[0]
    assert record.valid and record.rounds >= 2, record.reason
    assert record.accepted, record.reason
    details = [a.detail for a in record.actions]
    assert any(d.startswith("feedback: Task") for d in details)
    assert any(d.startswith("repair [") for d in details)
    lessons = (dirs["workspace"] / "memory" / "lessons.md").read_text()
    assert "csv-weighted-stats (csv-stat): [" in lessons


@pytest.mark.slow
def test_agentic_scripted_designs_validates_and_fixes_in_child_sandboxes(dirs):
    summary = run(seed_case("primer-tm-no-python"), dirs, "agentic", flaw_rate=1.0, seed=2)
    record = summary.records[0]
    assert record.accepted, record.reason
    assert kinds(summary) == {"Read", "Write", "Test", "Finish"}  # by main effect: its mkdir and chmod write
    child = [a.detail for a in record.actions if "autoenv-child validate" in a.detail]
    assert len(child) >= 2 and record.rounds == len(child), (
        "a flawed first draft is validated, repaired and validated again"
    )
    assert any(a.detail.startswith("repair:") for a in record.actions)
    assert any("autoenv-child solve" in a.detail for a in record.actions)
    times = [a.t for a in record.actions]
    assert times == sorted(times)
    ws = dirs["workspace"]
    task = Path(record.task_dir)
    assert (ws / "tasks" / task.name / "task.toml").is_file(), "the sandbox's tasks/ came back to the host workspace"
    assert task.name in (ws / "memory" / "notes.md").read_text(), "so did the notes the proposer wrote in its sandbox"
    assert validate_task(task, force=True, record=False).valid


#: each bundled seed case with one method, the methods in turn: every seed case gives an accepted task, and every
#: method gives one for two or three different seed cases (all three methods on every case tripled this test's CI
#: time; each method has its own tests above and below)
METHODS_IN_TURN = [("prompt", 2), ("feedback", 1), ("agentic", 1)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "method", "attempts"),
    [(p, *METHODS_IN_TURN[i % len(METHODS_IN_TURN)]) for i, p in enumerate(bundled_seed_cases())],
    ids=lambda v: v.stem if isinstance(v, Path) else str(v),
)
def test_every_bundled_seed_case_gives_an_accepted_task(path, method, attempts, tmp_path):
    case = SeedCase.load(path)
    dirs = {"out": tmp_path / "out", "workspace": tmp_path / "workspace"}
    # each case at its family's default level, the tasks this test was written for: climbing after a "too easy"
    # first attempt is tests/proposer/test_ladders.py's subject
    family = family_for(case)
    pin = {"level": str(family.default_level)} if family.ladder else {}
    summary = run(case, dirs, method, attempts=attempts, **pin)
    reasons = [(r.reason or "accepted").splitlines()[0] for r in summary.records]
    assert summary.accepted_tasks, f"{case.id} / {method}: {reasons}"
    for record in summary.records:
        assert record.accepted or record.reason

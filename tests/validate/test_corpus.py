"""Validation end to end: every deliberately flawed task is rejected for its flaw, good tasks pass.

Each folder in ``flawed/`` is a variant of ``good/sum-numbers`` with exactly
one flaw (described in the first line of its task.toml). The test asserts the
check that must catch it, that no unrelated check fails (so the fixture has
exactly that one flaw), and that the feedback names the evidence a proposer
needs. Real sandboxes and trials throughout; tasks are copied to tmp so the
recorded verdicts do not land in the repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autoenv.validate.cache import record_path
from autoenv.validate.checks import CHECK_ORDER
from autoenv.validate.validation import ValidationSettings, validate_task
from tests.conftest import bundled_tasks, needs_namespaces

HERE = Path(__file__).parent
FLAWED = HERE / "flawed"
GOOD = HERE / "good"

pytestmark = [needs_namespaces, pytest.mark.slow]

#: flawed task -> (the check that must fail, other checks allowed to fail as a consequence, text the feedback must
#: contain)
EXPECTED: dict[str, tuple[str, set[str], str]] = {
    "verifier-never-writes-reward": ("structure", {"oracle", "nop"}, "never writes /logs/verifier/reward.txt"),
    "broken-dockerfile-line": ("build", set(), "prepare_numbers.py"),
    "oracle-fails": ("oracle", set(), "reward 0"),
    "nop-passes": ("nop", set(), "does nothing gets reward 1"),
    "nondeterministic-test": ("deterministic", {"oracle"}, "not deterministic"),
    "solution-in-image": ("leakage", set(), "/opt/reference/solve.sh"),
    "answer-in-instruction": ("leakage", set(), "5004"),
    "solution-in-instruction": ("leakage", set(), "solution_in_instruction"),
    "tests-in-image": ("leakage", set(), "/app/check_sum.py"),
    # (the test file shipped in the image holds the expected sum: leakage finds that too)
    "tests-editable": ("tamper", {"leakage"}, "/app/tests/test_sum.py"),
    "exit0-stub-passes": ("tamper", set(), "exit0_stub: /app/sum.sh"),
    "empty-output-passes": ("tamper", {"partial"}, "empty_output: /app/sum.txt"),
    # (a minimal "0" passes the same test: the shortcut cheats catch it too)
    "nonempty-output-passes": ("partial", {"tamper"}, "/app/sum.txt: halved 5 to 2 bytes"),
    "too-slow-oracle": ("timeouts", set(), "agent timeout"),
    "no-reward-on-failure": ("nop", set(), "must always write /logs/verifier/reward.txt"),
    "pytest-plantable": ("tamper", set(), "planted_"),
    # (the leak scan reads ~/.cache now, unless a file is the base image's: it finds the cached sum too)
    "answer-in-dot-folder": ("tamper", {"leakage"}, "cached_answer: /root/.cache/answers/sum.txt"),
    "tests-in-dot-folder": ("tamper", {"leakage"}, "/app/.checks/test_sum.py"),
    "deliverable-reads-answers": ("tamper", set(), "answer_reader: /app/sum.py"),
}


def _copy(src: Path, dest_root: Path) -> Path:
    dest = dest_root / src.name
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".autoenv"))
    return dest


def test_corpus_is_complete():
    names = {p.name for p in FLAWED.iterdir() if p.is_dir()}
    assert names == set(EXPECTED), "every flawed task needs an expectation (and vice versa)"
    assert len(names) >= 12


def test_good_task_validates_and_is_recorded(tmp_path):
    task = _copy(GOOD / "sum-numbers", tmp_path)
    report = validate_task(task, trials_dir=tmp_path / "trials")
    assert report.valid, report.feedback()
    assert [c.status for c in report.checks] == ["pass"] * len(CHECK_ORDER)
    assert record_path(task, "validation").is_file()
    again = validate_task(task, trials_dir=tmp_path / "trials")
    assert again.cached and again.valid and again.content_hash == report.content_hash


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_flawed_task_is_rejected_for_its_flaw(name, tmp_path):
    check, allowed, needle = EXPECTED[name]
    task = _copy(FLAWED / name, tmp_path)
    report = validate_task(task, trials_dir=tmp_path / "trials")
    if name == "nondeterministic-test":
        # a coin-flip verifier: 8 oracle runs agree by chance with probability 2^-7; three tries
        for _ in range(3):
            report = validate_task(task, ValidationSettings(repeats=8), trials_dir=tmp_path / "trials", force=True)
            if check in {c.name for c in report.failed}:
                break
    failed = {c.name for c in report.failed}
    assert not report.valid
    assert check in failed, (
        f"{name}: expected {check} to fail, got {[(c.name, c.status, c.summary) for c in report.checks]}"
    )
    assert failed <= {check} | allowed, (
        f"{name}: unrelated checks failed: {failed - {check} - allowed}\n{report.feedback()}"
    )
    result = report.check(check)
    assert result is not None and needle in result.feedback, f"{name}: feedback lacks {needle!r}:\n{result.feedback}"
    assert f"[{check}]" in report.feedback()


@pytest.mark.skipif(not bundled_tasks(), reason="no bundled tasks in examples/tasks yet")
@pytest.mark.parametrize("task", bundled_tasks(), ids=lambda p: p.name)
def test_bundled_task_validates(task, tmp_path):
    report = validate_task(_copy(task, tmp_path), trials_dir=tmp_path / "trials")
    assert report.valid, report.feedback()

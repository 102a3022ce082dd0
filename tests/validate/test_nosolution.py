"""Issue 40: validating tasks that ship no solution, against a reviewer.

``reviewed/labels.toml`` labels one small flawed task of each shape issue 40 found in a real dataset (a plausible
output wins; tests read a file nobody creates; contradictory tests; tests recompute the answer from an input the
agent can edit; keyword grading for a different bug), each with the check that must reject it (``catch``) or
``caught = false`` where no check can (said honestly). The sound tasks are the bundled ones with their solution
removed: none may be rejected (they are "undetermined": no flaw found, solvability unknown). Every task is
validated for real with ``--no-oracle``; the test prints the agreement.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tomllib
from pathlib import Path

import pytest

from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase
from autoenv.validate.validation import ValidationSettings, avalidate_task, validate_task
from tests.conftest import bundled_tasks, needs_namespaces

HERE = Path(__file__).parent / "reviewed"
LABELS: dict[str, dict] = tomllib.loads((HERE / "labels.toml").read_text())
#: the flawed no-solution tasks, by name
FLAWED = {n: label for n, label in LABELS.items() if label.get("no_oracle") and label["verdict"] == "invalid"}

pytestmark = [needs_namespaces, pytest.mark.slow]


def test_every_flawed_shape_is_labelled():
    assert len(FLAWED) >= 5
    for name, label in FLAWED.items():
        assert ("catch" in label) != (label.get("caught") is False), f"{name}: a check to catch it, or caught = false"
        assert not (HERE / name / "solution").exists(), f"{name}: a no-solution task ships no solution"


@pytest.mark.skipif(not bundled_tasks(), reason="no bundled tasks")
def test_no_solution_corpus_agreement(tmp_path):
    sound = {p.name: p for p in bundled_tasks()}
    tasks = {n: HERE / n for n in FLAWED} | sound

    async def validate_all():
        gate = asyncio.Semaphore(2)

        async def one(name: str, source: Path):
            async with gate:
                task = shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("solution", ".autoenv"))
                return name, await avalidate_task(
                    task,
                    ValidationSettings(oracle=False, all_checks=True),
                    trials_dir=tmp_path / "trials",
                    record=False,
                    n_concurrent=2,
                )

        return dict(await asyncio.gather(*(one(n, p) for n, p in tasks.items())))

    reports = asyncio.run(validate_all())
    rows, wrong = [], []
    for name, report in sorted(reports.items()):
        failed = [c.name for c in report.failed]
        if name in FLAWED:
            label = FLAWED[name]
            want = label.get("catch")
            ok = want in failed if want else report.verdict != "valid"
            rows.append(f"flawed {name}: {report.verdict} {failed or ''} (expected: {want or 'not caught'})")
            if not ok:
                got = f"{report.verdict} {failed}\n{report.feedback()}"
                wrong.append(f"{name}: expected {want or 'not valid'}, got {got}")
        else:
            ok = report.verdict != "invalid"
            rows.append(f"sound  {name} (solution removed): {report.verdict} {failed or ''}")
            if not ok:
                wrong.append(f"{name}: a sound task rejected: {failed}\n{report.feedback()}")
    caught = sum(1 for n, lb in FLAWED.items() if lb.get("catch") in [c.name for c in reports[n].failed])
    kept = sum(reports[n].verdict != "invalid" for n in sound)
    print("\n".join(rows))
    print(
        f"agreement: {caught}/{len(FLAWED)} flawed no-solution tasks rejected by the check that should catch them "
        f"({sum(lb.get('caught') is False for lb in FLAWED.values())} labelled not caught), "
        f"{kept}/{len(sound)} sound tasks (solution removed) not rejected"
    )
    assert not wrong, "\n\n".join(wrong)


def test_an_agent_that_solves_a_task_without_solution_makes_it_valid(tmp_path):
    """--oracle-agent: the scripted solver serves a family's task whose solution was removed."""
    case = SeedCase(id="t-csv-stat", task="t", failure_mode="t", target_skill="t", family="csv-stat")
    task = FAMILIES["csv-stat"].generate(case, random.Random(5)).write(tmp_path / "tasks")
    shutil.rmtree(task / "solution")
    solver = "terminal:policy=scripted,success_rate=1"
    report = validate_task(
        task, ValidationSettings(oracle=False, oracle_agent=solver, oracle_attempts=2), trials_dir=tmp_path / "trials"
    )
    assert report.verdict == "valid", report.feedback()
    assert "solved it in attempt 1 of 2" in report.check("oracle").summary
    # its passing attempt, replayed as a script, is the reference the checks that rerun a solution use
    reference = report.check("oracle").evidence["reference"]
    assert reference.get("replayed") is True, reference
    assert "replayed as solution/solve.sh, pass too" in report.check("oracle").summary
    assert "bash -c" in Path(reference["script"]).read_text()
    for name in ("deterministic", "partial"):
        assert report.check(name).passed is True, report.check(name).summary
    assert not (task / "solution").exists()  # the task itself is left as it was
    gives_up = "terminal:policy=scripted,success_rate=0"
    report = validate_task(
        task, ValidationSettings(oracle=False, oracle_agent=gives_up, oracle_attempts=2), trials_dir=tmp_path / "trials"
    )
    assert report.verdict == "undetermined", report.feedback()
    assert [u.reason for u in report.undetermined] == [f"unsolved in 2 tries by {gives_up}; no flaw found"]

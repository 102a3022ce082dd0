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
from autoenv.validate.validation import avalidate_task, validate_task
from tests.conftest import bundled_tasks, needs_namespaces

HERE = Path(__file__).parent / "reviewed"
REPO = Path(__file__).resolve().parents[2]
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
                    task, trials_dir=tmp_path / "trials", oracle=False, all_checks=True, record=False, n_concurrent=2
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
    report = validate_task(task, trials_dir=tmp_path / "trials", oracle=False, oracle_agent=solver, oracle_attempts=2)
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
    report = validate_task(task, trials_dir=tmp_path / "trials", oracle=False, oracle_agent=gives_up, oracle_attempts=2)
    assert report.verdict == "undetermined", report.feedback()
    assert [u.reason for u in report.undetermined] == [f"unsolved in 2 tries by {gives_up}; no flaw found"]


# -- contradictory tests, fields the data lacks, inputs restored from the image ----------------------------------


def test_the_tables_of_a_heredoc_verifier_are_read_paired_and_patched(tmp_path):
    """The probe's static half: the two tables of the contradictory task's heredoc, with their lines; rows of one
    list are records, never rival expectations; the patched copy makes one table agree with the other."""
    from autoenv.validate.checks.contradictions import _agreeing, candidate_pairs, tables
    from autoenv.validate.checks.testcode import patched

    task = HERE / "nosol-contradictory-tests"
    [(a, b, keys)] = candidate_pairs(tables(task))
    assert (a.where, b.where, keys) == ("tests/test.sh:10", "tests/test.sh:11", ["6", "10"])
    text = patched(task, b.source, b.node, _agreeing(b, a, keys)).splitlines()
    assert text[10] == "greedy = {'6': [3, 3], '10': [4, 3, 3]}"
    assert text[:10] + text[11:] == [
        line for i, line in enumerate((task / "tests/test.sh").read_text().splitlines()) if i != 10
    ]
    rows = tmp_path / "rows" / "tests"
    rows.mkdir(parents=True)
    (rows / "test_rows.py").write_text("ROWS = [{'id': 1, 'n': 2}, {'id': 2, 'n': 3}]\nWANT = {'id': 1, 'n': 5}\n")
    pairs = candidate_pairs(tables(rows.parent))  # WANT against each row, never one row against the other
    assert (
        sorted(sorted([a.where, b.where]) for a, b, _ in pairs)
        == [["tests/test_rows.py:1", "tests/test_rows.py:2"]] * 2
    )


def test_tables_that_disagree_without_contradicting_each_other_reject_nothing(tmp_path):
    """A known-cases table beside a table of *wrong* answers the output must differ from: the tables disagree,
    but the first one written as the output passes, so the task is not rejected (2 verifier runs)."""
    task = Path(shutil.copytree(HERE / "nosol-contradictory-tests", tmp_path / "coins-with-wrong-answers"))
    test_sh = task / "tests" / "test.sh"
    test_sh.write_text(
        test_sh.read_text().replace("got.get(k) == v for k, v in greedy", "got.get(k) != v for k, v in greedy")
    )
    report = validate_task(task, trials_dir=tmp_path / "trials", oracle=False, record=False)
    check = report.check("contradictions")
    assert report.verdict == "undetermined" and not report.failed, report.feedback()
    assert check.passed is True and "do not make the tests contradict" in check.summary, check.summary


def test_the_fields_the_tests_index_records_with_are_read_from_the_tests(tmp_path):
    """``solvable``'s static half for shape 2: row["region"] over csv.DictReader of /app/sales.csv, with its line;
    a header that has the field is not a finding."""
    from autoenv.validate.checks.fields import _has_field, field_reads
    from autoenv.validate.checks.testcode import python_sources

    task = HERE / "nosol-missing-field"
    reads = {(r.path, r.field, r.file, r.line) for s in python_sources(task) for r in field_reads(s)}
    assert reads == {
        ("/app/sales.csv", "region", "tests/test_regions.py", 11),
        ("/app/sales.csv", "amount", "tests/test_regions.py", 11),
    }
    shipped = task / "environment" / "sales.csv"
    assert _has_field(shipped, "region") is False and _has_field(shipped, "amount") is True
    fixed = tmp_path / "sales.csv"
    fixed.write_text("id,store,region,amount\n1,north-1,north,12.50\n")
    assert _has_field(fixed, "region") is True
    # a file the agent must repair is not data: a JSON that does not parse, in a folder the instruction says to fix
    from autoenv.taskfmt.inputs import deliverable

    repair = (REPO / "examples" / "tasks" / "repair-config" / "instruction.md").read_text()
    assert deliverable(repair, "/app/config/features.json") and not deliverable(repair, "/app/server_app.py.bak")
    broken = tmp_path / "features.json"
    broken.write_text('{flags: {"new_checkout": yes}}')
    assert _has_field(broken, "flags") is None
    # a heredoc verifier's records too
    [source] = python_sources(HERE / "nosol-recompute-from-input")
    assert {r.field for r in field_reads(source)} == {"qty", "unit_price"}


def test_an_input_restored_from_the_image_beats_the_cheat_that_edits_it(tmp_path):
    """Issue 40's input integrity: ``nosol-recompute-from-input`` recomputes the answer from the agent's copy of
    /app/orders.csv (artifacts = ["/app"]), so emptying it with a revenue of 0 gets reward 1, and ``inputs`` warns (an
    error under --strict). Hardened, its test.sh restores the image's copy first: the same cheat gets 0, under
    Harbor's own loader and lint, and validation finds nothing to warn about."""
    from autoenv.taskfmt.check import check_task, errors
    from autoenv.taskfmt.harden import harden, needs_hardening
    from autoenv.trials.runner import arun_many

    task = Path(shutil.copytree(HERE / "nosol-recompute-from-input", tmp_path / "revenue"))
    assert needs_hardening(task)
    done = harden(task, tmp_path / "hardened" / "revenue")
    assert done.inputs == ["/app/orders.csv"] and done.roots == []  # restored; no broker (no pytest to serve)
    kept = done.task / "tests" / "autoenv-inputs" / "app" / "orders.csv"
    assert kept.read_bytes() == (task / "environment" / "orders.csv").read_bytes()
    assert errors(check_task(done.task, oracle=False)) == [] and not needs_hardening(done.task)
    cheat = ("autoenv.agents.adversary:AdversaryAgent", {"cheats": "inputs", "inputs": "/app/orders.csv"})
    jobs = [(task, *cheat), (done.task, *cheat)]
    before, after = asyncio.run(arun_many(jobs, n_concurrent=2, trials_dir=tmp_path / "trials"))
    assert (before.reward, after.reward) == (1.0, 0.0), (before, after)
    # the validator: a warning (an error under --strict) as it is, nothing once the input is restored
    report = validate_task(task, trials_dir=tmp_path / "trials", oracle=False)
    assert "/app/orders.csv" in report.check("inputs").evidence["editable_inputs"]
    strict = validate_task(task, trials_dir=tmp_path / "trials", oracle=False, strict=True)  # the trials recorded
    assert "inputs" in [c.name for c in strict.failed], strict.feedback()
    hardened = validate_task(done.task, trials_dir=tmp_path / "trials", oracle=False, record=False)
    assert hardened.verdict == "undetermined" and not hardened.failed, hardened.feedback()
    assert hardened.check("inputs").evidence["editable_inputs"] == [] and hardened.check("tamper").passed


def test_a_task_names_its_inputs_in_its_metadata_or_by_what_the_instruction_and_the_tests_say(tmp_path):
    """Which inputs hardening restores: the ones [metadata] inputs lists, else the copied data files the instruction
    names and the tests read, never a file the instruction says to write (an image may ship a placeholder there), to
    change, or one a test verifies by checksum."""
    from autoenv.taskfmt.inputs import copied_files, inputs_to_restore, named_inputs

    task = Path(shutil.copytree(HERE / "nosol-recompute-from-input", tmp_path / "revenue"))
    assert copied_files(task) == {"/app/orders.csv": task / "environment" / "orders.csv"}
    assert list(named_inputs(task)) == ["/app/orders.csv"]
    instruction = task / "instruction.md"
    original = instruction.read_text()
    instruction.write_text(original.replace("Write the total revenue", "Clean `/app/orders.csv`, then write the total"))
    assert named_inputs(task) == {}  # the agent's to change
    instruction.write_text(original + "\nSave the orders, sorted by id, to `/app/orders.csv`.\n")
    assert named_inputs(task) == {}  # an output the image ships a placeholder of
    instruction.write_text(original)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("[metadata]\n", "[metadata]\ninputs = []\n"))
    assert named_inputs(task) == {} and inputs_to_restore(task) == {}  # listed: none
    toml.write_text(toml.read_text().replace("inputs = []", 'inputs = ["/app/orders.csv"]'))
    assert list(inputs_to_restore(task)) == ["/app/orders.csv"]
    test_sh = task / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("import csv, sys", "import csv, sys, hashlib"))
    toml.write_text(toml.read_text().replace('inputs = ["/app/orders.csv"]\n', ""))
    assert named_inputs(task) == {}  # the test checks a checksum of what it reads


def test_the_files_a_dockerfile_copies_are_read_as_docker_copies_them(tmp_path):
    """``COPY . .`` under a WORKDIR, a dot-file, a folder's contents, nothing from outside the build context."""
    from autoenv.taskfmt.inputs import copied_files

    env = tmp_path / "task" / "environment"
    (env / "data").mkdir(parents=True)
    (env / ".meta").write_text("m")
    (env / "data" / "a.csv").write_text("x\n")
    (env / "Dockerfile").write_text(
        "FROM x\nWORKDIR /app\nCOPY . .\nCOPY .meta /opt/\nCOPY data/ /srv/\nCOPY ../x /y\n"
    )
    assert {k: v.relative_to(env).as_posix() for k, v in copied_files(tmp_path / "task").items()} == {
        "/app/.meta": ".meta",
        "/app/Dockerfile": "Dockerfile",
        "/app/data/a.csv": "data/a.csv",
        "/opt/.meta": ".meta",
        "/srv/a.csv": "data/a.csv",
    }

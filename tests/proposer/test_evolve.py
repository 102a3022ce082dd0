"""``autoenv propose --method evolve --from TASK_DIR``: a harder variant of a task, judged like any proposal, its
parent kept in the store (issue 42)."""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
import tomllib
from pathlib import Path

import pytest
from harbor.models.task.task import Task

from proposer_helpers import needs_sandbox, seed_case  # isort: skip  (puts the agent tests' chat_server on the path)
from chat_server import MODEL, ReplayServer, completion  # isort: skip
from typer.testing import CliRunner

from autoenv.agents.policies.scripted import ScriptedPolicy
from autoenv.cli.main import app
from autoenv.families.registry import FAMILIES
from autoenv.proposer.evolve import CannotEvolve, Evolution, Parent, scripted_target
from autoenv.proposer.models import ProposeOptions, ProposeSummary, SeedCase
from autoenv.proposer.propose import propose
from autoenv.proposer.scripted import ScriptedProposer
from autoenv.proposer.stage import record_attempt
from autoenv.proposer.workspace import Workspace
from autoenv.store import schema
from autoenv.store.db import Store
from autoenv.taskfmt.hashing import task_hash
from autoenv.vocab import SCRIPTED_SOLVER

runner = CliRunner()
LADDERED = [name for name, family in FAMILIES.items() if family.ladder]


def drafted(case: SeedCase, root: Path, *, level: str | None = None, seed: int = 0) -> Path:
    """A task the scripted proposer writes from ``case`` (no flaw), on disk: a parent to evolve."""
    return ScriptedProposer(seed=seed, flaw_rate=0.0, level=level).draft(case, 0).write(root)


def meta(task: Path) -> dict:
    return tomllib.loads((task / "task.toml").read_text())["metadata"]


def evolve_cli(*args: str) -> object:
    return runner.invoke(app, ["propose", "--method", "evolve", *args])


@pytest.mark.parametrize("family", LADDERED)
def test_the_variant_is_the_parents_own_draw_one_level_up(family, tmp_path):
    """The recorded draw reproduces the parent exactly, and the variant is that draw at the next level."""
    case = SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)
    parent_dir = drafted(case, tmp_path, level="1")
    parent = Parent.read(parent_dir)
    assert parent.family == family and parent.level == 1 and parent.draw == f"0:t-{family}:0:0"
    again = FAMILIES[family].draft(case, random.Random(parent.draw), level=1)  # the seed case and the draw
    again_files = {rel: data for rel, data in again.files.items() if rel != "task.toml"}
    assert again_files == {rel: data for rel, data in drafted_files(parent_dir).items() if rel != "task.toml"}

    proposer = Evolution(parent).proposer()
    child = proposer.draft(parent.case(), 0)
    assert child.params["ladder_level"] == 2 and child.params["draw"] == parent.draw
    assert child.name != parent.name and "-l2-" in child.name and child.params["parent"] == parent.name
    assert "level 1) to level 2: +" in proposer.describe()
    assert scripted_target(Parent.read(child.write(tmp_path)))[1] == 3, "an evolved task evolves again"
    # too easy: the next variant climbs again, from the same draw; too hard there: a fresh draw of that level
    assert proposer.observe(FAMILIES[family], 2, 1.0) == 3
    third = proposer.draft(parent.case(), 0, variant=1)
    assert third.params["ladder_level"] == 3 and third.params["draw"] == parent.draw and "-l3-" in third.name
    assert proposer.observe(FAMILIES[family], 3, 0.0) == 3
    assert proposer.draft(parent.case(), 0, variant=2).params["draw"] != parent.draw


def drafted_files(task: Path) -> dict[str, str | bytes]:
    """A written task's files as a draft holds them: text as ``str``, binary files (a workbook) as ``bytes``."""

    def content(path: Path) -> str | bytes:
        data = path.read_bytes()
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data

    return {p.relative_to(task).as_posix(): content(p) for p in task.rglob("*") if p.is_file()}


def test_top_level_unladdered_and_bad_inputs_are_refused_clearly(tmp_path, monkeypatch):
    top = drafted(seed_case("log-parser-malformed"), tmp_path / "top", level="max")
    # a family without a ladder: every family has one now, so one is taken off here (the CLI runs in this process)
    family = FAMILIES["docx-formatting"]
    monkeypatch.setitem(FAMILIES, family.name, dataclasses.replace(family, levels=(), default_level=None, ladder=()))
    docx = SeedCase(id="t-docx", task="t", failure_mode="t", target_skill="t", family="docx-formatting")
    plain = drafted(docx, tmp_path / "plain")
    out = str(tmp_path / "out")
    for args, words in (
        (
            ["--from", str(top)],
            [str(top), f"level {max(FAMILIES['log-parse'].levels)} is the top of family log-parse", "--policy openai"],
        ),
        (["--from", str(plain)], [str(plain), "family docx-formatting has one level (no ladder)", "--policy openai"]),
        (["--from", str(tmp_path)], [str(tmp_path), "not a task folder"]),
        ([], ["--method evolve needs --from TASK_DIR"]),
        (["--from", str(top), "--with", str(plain)], ["--with", "--policy openai"]),
        (["--from", str(top), "--seed-case", "x.yaml"], ["drop --seed-case"]),
        (["--from", str(plain), "--level", "2"], ["drop --level"]),
    ):
        result = evolve_cli(*args, "--out", out)
        shown = " ".join(result.output.split())
        assert result.exit_code == 1 and all(w in shown for w in words), (args, result.output)
        assert "Traceback" not in result.output
    with pytest.raises(CannotEvolve, match="top of family log-parse"):
        propose(Parent.read(top).case(), method="evolve", parent=top, out_dir=tmp_path / "o", workspace=tmp_path / "w")
    assert not (tmp_path / "o" / "summary.json").exists(), "refused before any attempt"
    result = runner.invoke(app, ["propose", "--from", str(top), "--seed-case", "x.yaml", "--out", out])
    assert result.exit_code == 1 and "--from and --with go with --method evolve" in result.output


def test_an_older_store_gains_the_parent_columns(tmp_path):
    db = tmp_path / "s.db"
    Store(db).close()
    with sqlite3.connect(db) as conn:  # the store as version 2 left it
        for table in ("tasks", "attempts"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN parent_name")
            conn.execute(f"ALTER TABLE {table} DROP COLUMN parent_hash")
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version(version) VALUES (2)")
    store = Store(db)
    assert store.version() == schema.LATEST >= 3
    store.upsert_task(hash="h", name="t-l2", path="/x", parent_name="t", parent_hash="p")
    assert {k: store.task("h")[k] for k in ("parent_name", "parent_hash")} == {"parent_name": "t", "parent_hash": "p"}


def test_the_model_brief_quotes_both_tasks_and_names_the_axes(tmp_path):
    parent = drafted(seed_case("log-parser-malformed"), tmp_path)
    other = drafted(seed_case("primer-tm-no-python"), tmp_path)
    options = ProposeOptions(method="evolve", policy="openai", model="m", parent=parent, compose=other)
    evolution = Evolution.plan(options)
    text = evolution.brief(Workspace(tmp_path / "ws").init(), evolution.model_name(0), rollouts=4, max_rounds=3)
    assert "Write a harder variant" in text and "`hidden_cases`" in text and "level 1 of family log-parse" in text
    assert "no calibration of it is recorded" in text
    assert (parent / "instruction.md").read_text().strip() in text
    assert (other / "instruction.md").read_text().strip() in text and "compose it with the second task" in text
    assert evolution.model_name(0) == f"{parent.name}-harder-a0"


SOLVER_PREFIX = "terminal:policy=scripted,success_rate="


def one_of_two(instruction: str) -> str:
    """A scripted solver spec that attempts this task in exactly one of two rollouts (seeds 0 and 1): accepted."""
    draws = sorted(ScriptedPolicy(seed=i).decide(instruction)["draw"] for i in (0, 1))
    return f"{SOLVER_PREFIX}{(draws[0] + draws[1]) / 2:.6f}"


@pytest.mark.slow
@needs_sandbox
def test_evolve_a_bundled_seed_cases_task_through_the_cli(tmp_path):
    """The scripted proposer's task from a bundled seed case, evolved: valid, a level up, accepted, parent stored."""
    parent = drafted(seed_case("log-parser-malformed"), tmp_path / "parents")
    before = task_hash(parent)
    expected = Evolution(Parent.read(parent)).proposer().draft(Parent.read(parent).case(), 0)
    db = tmp_path / "store.db"
    out = tmp_path / "out"
    args = ["--from", str(parent), "--out", str(out), "-k", "2", "--max-rounds", "1", "--db", str(db), "--json"]
    result = evolve_cli(*args, "--solver", one_of_two(expected.files["instruction.md"]))
    assert result.exit_code == 0, result.output
    summary = ProposeSummary.model_validate_json((out / "summary.json").read_text())
    record = summary.records[0]
    assert record.valid and record.accepted and record.pass_rate == 0.5, record.reason
    assert json.loads(result.stdout)["records"][0]["parent_name"] == parent.name
    child = Path(summary.accepted_tasks[0])
    assert child.name == expected.name != parent.name and task_hash(parent) == before, "the parent is left as it was"
    brief = Evolution(Parent.read(child)).brief(Workspace(tmp_path / "ws").init(), "next")
    assert f"its last calibration ({SOLVER_PREFIX}" in brief and "1/2 passed: reward varies" in brief, "for a model"
    metadata = Task(child).config.metadata  # Harbor's own loader
    assert metadata["level"] == meta(parent)["level"] + 1 == 2 and metadata["family"] == "log-parse"
    assert metadata["draw"] == meta(parent)["draw"] and metadata["seed_case"] == "log-parser-malformed"

    store = Store(db)
    [task] = [t for t in store.tasks() if t["name"] == child.name]
    assert (task["parent_name"], task["parent_hash"], task["method"]) == (parent.name, before, "evolve")
    assert task["valid"] and task["calibrated"] and task["hash"] == record.task_hash
    [attempt] = store.attempts(run="propose")
    assert (attempt["parent_name"], attempt["parent_hash"]) == (parent.name, before)
    # a rerun of the command records nothing twice (the attempt's natural key)
    assert not record_attempt(store, record, run="propose", step=0, key=attempt["attempt_key"])
    assert len(store.attempts(run="propose")) == 1
    store.close()


@pytest.mark.slow
@needs_sandbox
def test_a_model_writes_the_harder_variant_of_a_task_with_no_ladder(tmp_path):
    """A primer-tm task (one level) composed with a log-parse task (``--with``): the model gets both tasks' files and
    the evolve brief through a real loopback server; what it writes is validated and calibrated for real, and the
    parent is recorded."""
    from test_loopback import SEED, mixed_primer_task, write_calls

    parent = drafted(seed_case("primer-tm-no-python"), tmp_path / "parents")
    files = mixed_primer_task()
    other = drafted(seed_case("log-parser-malformed"), tmp_path / "parents")
    quoted = [json.dumps((t / "instruction.md").read_text().strip())[1:-1] for t in (parent, other)]  # as in JSON
    recording = [
        {
            "expect": {
                "tools": True,
                "contains": ["Write a harder variant", "compose it with the second task", *quoted],
            },
            "response": completion(
                1, content="Raised hidden_cases.", calls=write_calls(".", files) + [("finish", {"message": "done"})]
            ),
        }
    ]
    with ReplayServer(recording) as server:
        summary = propose(
            Parent.read(parent).case(),
            method="evolve",
            policy="openai",
            model=MODEL,
            base_url=server.url,
            parent=parent,
            compose=other,
            out_dir=tmp_path / "out",
            workspace=tmp_path / "workspace",
            seed=SEED,
            solver=SCRIPTED_SOLVER,
        )
    assert server.problems == [] and server.served == 1, server.problems
    record = summary.records[0]
    assert record.accepted and record.method == "evolve", record.reason
    assert (record.parent_name, record.parent_hash) == (parent.name, task_hash(parent))
    assert Path(record.task_dir).name == f"{parent.name}-harder-a0"


def test_the_report_names_an_evolved_tasks_parent(tmp_path):
    from autoenv.report.build import build_report

    db = tmp_path / "store.db"
    store = Store(db)
    for name, parent in (("log-parse-x", None), ("log-parse-x-l2", "log-parse-x")):
        row = dict(hash=name, name=name, path=str(tmp_path / name), method="evolve" if parent else "feedback")
        store.upsert_task(**row, valid=True, calibrated=True, pass_rate=0.5, parent_name=parent)
    store.close()
    page = build_report(db, tmp_path / "report").read_text()
    assert "<th>parent</th>" in page and "<td>log-parse-x</td>" in page


def test_the_flywheel_refuses_evolve_it_proposes_from_seed_cases(tmp_path):
    from autoenv.flywheel.config import FlywheelConfig

    with pytest.raises(ValueError, match="--method evolve is `autoenv propose --from TASK`"):
        FlywheelConfig(method="evolve")
    result = runner.invoke(app, ["flywheel", "--method", "evolve", "--db", str(tmp_path / "f.db")])
    assert result.exit_code == 1 and "proposes from seed cases" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "f.db").exists()

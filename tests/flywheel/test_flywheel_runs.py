"""The flywheel's run-level rules: one run is one experiment, one policy by default, seeds the proposer can use."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.flywheel.loop import Flywheel, FlywheelConfig, RunConfigMismatch
from autoenv.proposer.models import SeedCase
from autoenv.store import schema
from autoenv.store.db import Store
from autoenv.vocab import SCRIPTED_SOLVER
from tests.conftest import EXAMPLE_TASKS, needs_namespaces

AUTOENV = str(Path(sys.executable).with_name("autoenv"))


def test_a_resumed_run_with_another_configuration_refuses(tmp_path):
    store = Store(tmp_path / "fw.db")
    Flywheel(FlywheelConfig(run="r", out_dir=tmp_path, solver="coin:p=0.5", group_size=4), store)
    with pytest.raises(RunConfigMismatch) as err:
        Flywheel(FlywheelConfig(run="r", out_dir=tmp_path, solver="coin:p=0.9", group_size=8), store)
    message = str(err.value)
    assert "group_size: 4 then, 8 now" in message and "solver: 'coin:p=0.5' then, 'coin:p=0.9' now" in message
    assert "another --run name" in message
    # going further, or faster, is the same experiment
    Flywheel(
        FlywheelConfig(run="r", out_dir=tmp_path, solver="coin:p=0.5", group_size=4, steps=9, n_concurrent=4), store
    )
    # and from the CLI: a clear message and exit code 2, before any trial runs
    run = subprocess.run(
        [
            AUTOENV,
            "flywheel",
            "--db",
            str(tmp_path / "fw.db"),
            "--run",
            "r",
            "--out",
            str(tmp_path),
            "--solver",
            "coin:p=0.9",
            "-g",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "started with another configuration" in run.stdout + run.stderr
    assert store.count("rollouts") == 0 and store.count("attempts") == 0


def test_one_policy_by_default(tmp_path):
    def fw(run: str, **options) -> Flywheel:
        return Flywheel(
            FlywheelConfig(run=run, out_dir=tmp_path, **options),
            Store(tmp_path / "p.db"),
            progress=lambda e, d: warnings.append(d.get("message", "")) if e == "warning" else None,
        )

    warnings: list[str] = []
    offline = fw("offline")
    assert (
        offline.config.proposer == "scripted"
        and offline.solver_text() == SCRIPTED_SOLVER
        and offline.config.policies == "shared"
    )
    model = fw("model", model="qwen", base_url="http://10.0.0.5:8000/v1")
    assert model.config.proposer == "openai"
    assert model.solver_text() == "terminal:policy=openai,model=qwen,base_url=http://10.0.0.5:8000/v1"
    served = fw("served", serve="cpu", serve_port=8123, solver="terminal:policy=openai,max_turns=3")
    assert served.solver_text() == "terminal:policy=openai,max_turns=3,model=policy,base_url=http://127.0.0.1:8123/v1"
    assert served.endpoint() == ("policy", "http://127.0.0.1:8123/v1") and served.config.policies == "shared"
    assert warnings == []
    mixed = fw("mixed", model="qwen", solver=SCRIPTED_SOLVER)
    assert mixed.config.policies == "mixed" and any("mixed policies" in w for w in warnings)
    stored = Store(tmp_path / "p.db").ensure_run("mixed", {})
    assert stored["policies"] == "mixed", "the run's record says so, for the report"


def test_an_old_store_is_migrated_in_place(tmp_path):
    db = tmp_path / "old.db"
    Store(db)
    with sqlite3.connect(db) as conn:  # make it a version-1 store: no episode_path, schema_version 1
        conn.execute("ALTER TABLE attempts DROP COLUMN episode_path")
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version(version) VALUES (1)")
    assert Store(db).version() == schema.LATEST
    with sqlite3.connect(db) as conn:
        assert "episode_path" in {row[1] for row in conn.execute("PRAGMA table_info(attempts)")}


@needs_namespaces
@pytest.mark.slow
def test_a_seed_case_harvested_from_a_bundled_task_is_one_the_proposer_can_use(tmp_path):
    """Bundled tasks carry a ``category`` (here "databases"), which is no template family: it must not become one."""
    from autoenv.proposer.propose import propose
    from autoenv.proposer.seeds import harvest_seed_cases
    from autoenv.rollout.collect import collect_groups
    from autoenv.taskfmt.hashing import task_hash

    task = EXAMPLE_TASKS / "sqlite-sales-report"
    store = Store(tmp_path / "fw.db")
    flywheel = Flywheel(
        FlywheelConfig(run="h", out_dir=tmp_path, solver="terminal:policy=scripted,success_rate=0", benchmark_dir=None),
        store,
    )
    pair = (task, task_hash(task))
    flywheel.register_tasks([pair], "bundled", "bundled")
    groups = asyncio.run(
        collect_groups(
            store,
            run="h",
            step=0,
            tasks=[pair],
            group_size=2,
            spec=flywheel.spec,
            policy_version=0,
            trials_dir=tmp_path / "trials",
            executor=flywheel.executor(0),
        )
    )
    assert groups[0].rewards == [0.0, 0.0]
    assert (
        harvest_seed_cases(store, step=0, groups=groups, tasks={pair[1]: task}, out_dir=flywheel.out / "seed_cases")
        == 1
    )
    case = SeedCase.load(tmp_path / "h" / "seed_cases" / "sqlite-sales-report-s0.yaml")
    assert case.family is None and "databases" in case.target_skill
    assert "failed 2 of 2 rollouts" in case.failure_mode and case.source_trial
    summary = propose(
        case, method="prompt", policy="scripted", out_dir=tmp_path / "out", workspace=tmp_path / "ws", attempts=1
    )
    record = summary.records[0]
    assert record.task_dir is not None and "unknown family" not in (record.reason or ""), record.reason


def test_a_bug_in_a_proposal_stops_the_run_instead_of_scoring_zero(tmp_path, monkeypatch):
    from autoenv.proposer import scripted
    from autoenv.proposer.propose import propose

    def broken(self, case, attempt, **kwargs):
        raise TypeError("draft() got an unexpected keyword argument 'variant'")

    monkeypatch.setattr(scripted.ScriptedProposer, "draft", broken)
    case = SeedCase.load(Path(__file__).resolve().parents[2] / "examples" / "seed_cases" / "median-bug-unsorted.yaml")
    with pytest.raises(TypeError):
        propose(
            case, method="prompt", policy="scripted", out_dir=tmp_path / "out", workspace=tmp_path / "ws", attempts=1
        )
    assert not (tmp_path / "ws" / "memory" / "attempts.jsonl").exists(), "nothing is recorded as the proposer's failure"


def test_without_the_bundled_examples_the_defaults_say_what_to_pass(tmp_path, monkeypatch):
    """An installed autoenv has no examples/ next to it: the defaults are empty and the error names the option."""
    monkeypatch.setenv("AUTOENV_EXAMPLES", str(tmp_path / "nowhere"))
    config = FlywheelConfig(run="x", out_dir=tmp_path)
    assert config.seed_cases_dir is None and config.benchmark_dir is None
    with pytest.raises(FileNotFoundError, match="--seed-cases"):
        Flywheel(config, Store(tmp_path / "x.db")).seed_cases(0)
    run = subprocess.run(
        [AUTOENV, "flywheel", "--db", str(tmp_path / "y.db"), "--out", str(tmp_path), "--steps", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AUTOENV_EXAMPLES": str(tmp_path / "nowhere")},
    )
    assert run.returncode == 2 and "--seed-cases" in run.stdout + run.stderr, run.stdout + run.stderr

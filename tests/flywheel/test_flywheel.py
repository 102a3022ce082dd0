"""The closed loop end to end, offline: propose, validate, roll out, train, resume."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoenv.shared.settings import ValidationSettings
from autoenv.store.db import Store
from autoenv.validate.validation import cached_validation
from tests.conftest import REPO, needs_namespaces
from tests.tracking import tensorboard_scalars

pytestmark = [needs_namespaces, pytest.mark.slow]

AUTOENV = str(Path(sys.executable).with_name("autoenv"))
SMALL = ["--group-size", "2", "--tasks-per-step", "2", "-n", "2", "--benchmark-tasks", "3"]


def flywheel_cmd(db: Path, out: Path, steps: int, *extra: str) -> list[str]:
    return [AUTOENV, "flywheel", "--steps", str(steps), "--db", str(db), "--out", str(out), *SMALL, *extra]


def test_two_step_offline_flywheel_then_report(tmp_path):
    db, out = tmp_path / "fw.db", tmp_path / "fw"
    run = subprocess.run(
        flywheel_cmd(db, out, 2, "--report-to", "tensorboard"),
        capture_output=True,
        text=True,
        timeout=1500,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    store = Store(db)
    steps = store.steps("main")
    curves = tensorboard_scalars(out / "tensorboard", "main")
    for tag in (
        "solver/benchmark_score",
        "solver/useful_group_rate",
        "proposer/proposer_valid_rate",
        "time/collect_sec",
    ):
        assert [step for step, _ in curves[tag]] == [0, 1], (tag, curves.keys())
    assert [v for _, v in curves["solver/benchmark_score"]] == pytest.approx([s["benchmark_score"] for s in steps])
    assert [s["step"] for s in steps] == [0, 1] and all(s["status"] == "done" for s in steps)
    assert [s["policy_version_in"] for s in steps] == [0, 1], "each step trains and the next uses the new version"
    assert store.count("rollouts") == 2 * 2 * 2
    assert store.count("attempts") >= 2
    for g in store.groups("main"):
        assert len(store.rollouts(group_id=g["id"])) == 2
    versions = {r["policy_version"] for r in store.rollouts("main")}
    assert versions == {0, 1}
    assert (out / "main" / "train").exists()
    report = subprocess.run(
        [AUTOENV, "report", "--db", str(db), "--out", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stderr
    from tests.report.test_report import page_problems, screenshot

    page = (tmp_path / "report" / "index.html").read_text()
    assert "<h2>Runs</h2>" in page and "<td>shared</td>" in page, "the report says one policy proposed and solved"
    # the proposer samples in the batches are the recorded episodes, as the proposer saw them
    from autoenv.proposer.episode import ProposerEpisode
    from autoenv.train.batch import TrainingBatch

    proposer_samples = [
        s
        for path in sorted((out / "main" / "train" / "batches").glob("step-*.jsonl"))
        for s in TrainingBatch.read_jsonl(path).samples
        if s.role == "proposer"
    ]
    for sample in proposer_samples:
        episode = ProposerEpisode.load(sample.meta["episode_path"])
        assert sample.messages == episode.messages and "Seed case" in sample.messages[1]["content"]
        assert sample.messages[-1]["role"] == "assistant" and sample.messages[-1]["tool_calls"]
    shown = screenshot(tmp_path / "report" / "index.html", tmp_path / "report.png")
    assert {"valid_rate_by_method.png", "training_curves.png"} <= {i["src"] for i in shown["images"]}
    assert page_problems(shown) == [], shown["images"]  # every plot shown, and with data in it


def _count(db: Path, table: str) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_validation_options_of_the_flywheel_reach_every_proposed_task(tmp_path):
    """--repeats and --strict are validation's settings: the run records them in its config and the proposer's
    judge validates every proposed task under them (its recorded report says so, the oracle ran 3 times)."""
    db, out = tmp_path / "fw.db", tmp_path / "fw"
    cmd = flywheel_cmd(db, out, 1, "--repeats", "3", "--strict", "--proposals-per-step", "1")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    store = Store(db)
    stored = store.run_configs()["main"]["validation"]
    assert stored == ValidationSettings(repeats=3, strict=True).model_dump(mode="json")
    proposed = [store.task(a["task_hash"]) for a in store.attempts("main") if a["task_hash"]]
    assert proposed, run.stderr[-3000:]
    for task in proposed:
        report = cached_validation(task["path"])
        assert report is not None and (report.settings.repeats, report.settings.strict) == (3, True), task["path"]
        oracle = report.check("oracle")
        assert oracle.passed is None or "/3 runs" in oracle.summary, oracle.summary


def test_killed_mid_step_resumes_without_lost_or_duplicated_rows(tmp_path):
    db, out = tmp_path / "fw.db", tmp_path / "fw"
    cmd = flywheel_cmd(db, out, 2)
    cmd[cmd.index("--benchmark-tasks") + 1] = "1"  # what is tested is the resume, not the benchmark
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path, start_new_session=True
    )
    deadline = time.monotonic() + 900
    # kill once step 1 has started collecting: its attempts or first rollouts are in
    while time.monotonic() < deadline and proc.poll() is None:
        with_step1 = 0
        try:
            with sqlite3.connect(db, timeout=30) as conn:
                with_step1 = conn.execute("SELECT count(*) FROM train_steps WHERE step = 1").fetchone()[0]
        except sqlite3.Error:
            pass
        if with_step1:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "flywheel finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _count(db, "rollouts")
    assert before < 2 * 2 * 2
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    store = Store(db)
    assert store.count("rollouts") == 2 * 2 * 2
    assert [s["status"] for s in store.steps("main")] == ["done", "done"]
    for g in store.groups("main"):
        assert sorted(r["index"] for r in store.rollouts(group_id=g["id"])) == [0, 1]
    keys = [a["attempt_key"] for a in store.attempts("main")]
    assert len(keys) == len(set(keys))


def test_ray_executor_matches_local_pool(tmp_path):
    pytest.importorskip("ray")
    import asyncio

    from autoenv.rollout.collect import collect_groups, local_executor
    from autoenv.rollout.ray_pool import ray_executor, shutdown
    from autoenv.spec import SolverSpec
    from autoenv.taskfmt.hashing import task_hash

    tasks = [REPO / "examples" / "tasks" / name for name in ("fix-median-bug", "csv-statistic")]
    pairs = [(t, task_hash(t)) for t in tasks]
    spec = SolverSpec.parse("coin:p=0.5")
    results = {}
    for name, executor in (("local", local_executor(2)), ("ray", None)):
        store = Store(tmp_path / f"{name}.db")
        for t, h in pairs:
            store.upsert_task(hash=h, name=t.name, path=str(t), method="bundled")
        if executor is None:
            executor = ray_executor("local", num_cpus=2)
        groups = asyncio.run(
            collect_groups(
                store,
                run="r",
                step=0,
                tasks=pairs,
                group_size=3,
                spec=spec,
                policy_version=0,
                trials_dir=tmp_path / name,
                executor=executor,
            )
        )
        results[name] = ([g.rewards for g in groups], store.count("rollouts"), store.count("groups"))
    shutdown()
    assert results["local"] == results["ray"]
    assert results["local"][1] == 6

"""The offline loop learns: the learned policy's table moves with the verifiers' rewards, in real sandboxes.

Directions only, on short runs (the full dynamics are bench/ material): the
solver's probability of the correct strategy rises on tasks it trained on,
each step's rollouts draw from the table the previous step saved, and the
proposer's table moves from r_P exactly as the recorded draws and advantages say.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from autoenv.agents.policies.learned import STRATEGIES, PolicyTable
from autoenv.flywheel.loop import Flywheel, FlywheelConfig
from autoenv.proposer.scripted import DRAFT_CHOICES
from autoenv.store.db import Store
from autoenv.train.batch import TrainingBatch
from tests.conftest import EXAMPLE_TASKS, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]


def test_the_solver_learns_the_strategy_the_verifier_rewards(tmp_path):
    static = tmp_path / "static"
    for name in ("fix-median-bug", "shell-backup-rotation"):
        shutil.copytree(EXAMPLE_TASKS / name, static / name)
    store = Store(tmp_path / "fw.db")
    config = FlywheelConfig(run="learn", steps=3, group_size=4, tasks_per_step=2, static_dir=static, benchmark_dir=None,
                            solver="terminal:policy=learned", trainer="table:lr=2", out_dir=tmp_path / "out", n_concurrent=2)
    reports = asyncio.run(Flywheel(config, store).run())
    train = tmp_path / "out" / "learn" / "train"
    final = PolicyTable.load(train / f"v{reports[-1].policy_version_out}")
    assert final.version == reports[-1].policy_version_out >= 1, "at least one step had a useful group and trained"
    for key, logits in final.solver.items():
        assert final.probs("solver", key, STRATEGIES)["solve"] > 1 / 3, (key, logits)
    # every rollout drew from the table of the version its step started with
    for row in store.rollouts("learn"):
        steps = json.loads(Path(row["trajectory_path"]).read_text())["steps"]
        decision = next(s["extra"]["decision"] for s in steps if (s.get("extra") or {}).get("decision"))
        assert decision["table_version"] == row["policy_version"]


def test_proposer_training_moves_the_first_draft_choice_by_r_p(tmp_path):
    store = Store(tmp_path / "fw.db")
    config = FlywheelConfig(run="prop", steps=1, group_size=2, tasks_per_step=1, proposals_per_step=4, method="prompt",
                            solver="terminal:policy=learned", trainer="table:lr=1", benchmark_dir=None, out_dir=tmp_path / "out",
                            n_concurrent=2)
    report = asyncio.run(Flywheel(config, store).run())[0]
    batch = TrainingBatch.read_jsonl(tmp_path / "out" / "prop" / "train" / "batches" / "step-00000.jsonl")
    drawn = [s for s in batch.samples if s.role == "proposer"]
    attempts = store.attempts("prop", 0)
    assert len(attempts) == 4 and all(a["episode_path"] for a in attempts)
    if not drawn:
        assert len({a["reward"] for a in attempts}) == 1, "no proposer sample only when r_P had no variance"
        return
    expected = {c: 0.0 for c in DRAFT_CHOICES}
    for s in drawn:
        d = s.meta["decision"]
        for c in DRAFT_CHOICES:
            expected[c] += s.advantage * ((c == d["strategy"]) - d["probs"][c]) / len(drawn)
    table = PolicyTable.load(tmp_path / "out" / "prop" / "train" / f"v{report.policy_version_out}")
    for c in DRAFT_CHOICES:
        assert table.proposer["first_draft"][c] == pytest.approx(expected[c], abs=1e-5)

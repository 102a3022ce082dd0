"""The ``table`` trainer: the exact policy gradient of the learned policy's softmax, from recorded draws."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from autoenv.agents.policies.learned import STRATEGIES, LearnedPolicy, PolicyTable
from autoenv.train.backends import make_trainer
from autoenv.train.batch import TrainingBatch, TrainingSample

REPO = Path(__file__).resolve().parents[2]


def sample(
    strategy: str, advantage: float, probs: dict[str, float], role: str = "solver", key: str = "fix_function"
) -> TrainingSample:
    decision = {"role": role, "key": key, "strategy": strategy, "probs": probs}
    return TrainingSample(
        role=role,
        messages=[{"role": "user", "content": "x"}],
        advantage=advantage,
        reward=max(advantage, 0),
        meta={"decision": decision},
    )


def test_one_step_is_the_softmax_policy_gradient_and_saves_the_next_version(tmp_path):
    uniform = {s: 1 / 3 for s in STRATEGIES}
    batch = TrainingBatch(
        run="t",
        step=0,
        policy_version=0,
        samples=[
            sample("solve", 1.0, uniform),
            sample("give_up", -1.0, uniform),
            sample("careful", 1.0, {"careful": 0.5, "careless": 0.5}, role="proposer", key="first_draft"),
            sample("solve", 0.0, uniform),  # no advantage: no gradient
        ],
    )
    result = make_trainer("table:lr=0.5").train_step(batch, policy_dir=None, out_dir=tmp_path)
    assert result.policy_version_out == 1 and result.checkpoint == tmp_path / "v1"
    table = PolicyTable.load(result.checkpoint)
    # mean over the key's 2 samples of A * (e_s - p), times lr
    solve = 0.5 * ((1 - 1 / 3) * 1.0 + (0 - 1 / 3) * -1.0) / 2
    give_up = 0.5 * ((0 - 1 / 3) * 1.0 + (1 - 1 / 3) * -1.0) / 2
    assert table.solver["fix_function"]["solve"] == pytest.approx(solve)
    assert table.solver["fix_function"]["give_up"] == pytest.approx(give_up)
    assert table.proposer["first_draft"]["careful"] == pytest.approx(0.25) and table.proposer["first_draft"][
        "careless"
    ] == pytest.approx(-0.25)
    assert table.probs("solver", "fix_function", STRATEGIES)["solve"] > 1 / 3
    assert result.loss == pytest.approx(-(math.log(1 / 3) - math.log(1 / 3) + math.log(0.5)) / 3)
    meta = json.loads((tmp_path / "v1" / "autoenv_policy.json").read_text())
    assert meta["version"] == 1 and meta["backend"] == "table"


def test_a_batch_without_recorded_draws_keeps_the_version(tmp_path):
    batch = TrainingBatch(
        run="t",
        step=3,
        policy_version=3,
        samples=[TrainingSample(role="solver", messages=[{"role": "user", "content": "x"}], advantage=1.0)],
    )
    result = make_trainer("table").train_step(batch, policy_dir=None, out_dir=tmp_path)
    assert result.policy_version_out == 3 and result.extra["skipped"] == 1


def test_the_learned_policy_draws_from_its_table(tmp_path):
    instruction = (REPO / "examples" / "tasks" / "fix-median-bug" / "instruction.md").read_text()
    key = LearnedPolicy(seed=0).decide(instruction)["key"]
    assert key == "fix_function"
    path = PolicyTable(version=4, solver={key: {"solve": 20.0}}).save(tmp_path / "v4")
    draws = [LearnedPolicy(seed=s, table=str(path)).decide(instruction) for s in range(20)]
    assert all(d["strategy"] == "solve" and d["table_version"] == 4 for d in draws)
    untrained = [LearnedPolicy(seed=s).decide(instruction)["strategy"] for s in range(60)]
    assert set(untrained) == set(STRATEGIES), "the untrained table is uniform"


def test_train_step_on_the_command_line_reports_to_tensorboard(tmp_path):
    """`autoenv train step --report-to tensorboard`: the step's loss and sample count, as TensorBoard serves them."""
    import subprocess
    import sys

    from tests.tracking import tensorboard_scalars

    uniform = {s: 1 / 3 for s in STRATEGIES}
    batch = TrainingBatch(
        run="cli", step=3, policy_version=0, samples=[sample("solve", 1.0, uniform), sample("give_up", -1.0, uniform)]
    )
    path = batch.write_jsonl(tmp_path / "batch.jsonl")
    autoenv = str(Path(sys.executable).with_name("autoenv"))
    run = subprocess.run(
        [autoenv, "train", "step", "--batch", str(path), "--out", str(tmp_path / "out"), "--trainer", "table:lr=0.5",
         "--report-to", "tensorboard"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    curves = tensorboard_scalars(tmp_path / "out" / "tensorboard", "cli")
    assert curves["train/samples"] == [(3, 2.0)]
    assert curves["train/loss"] == [(3, pytest.approx(result["loss"], rel=1e-5))]
    assert [step for step, _ in curves["time/train_sec"]] == [3]

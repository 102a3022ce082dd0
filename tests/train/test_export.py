"""The export format (batch JSONL) and the backend interface that needs no torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from autoenv.train.backends import ExportTrainer, HFTrainer, Trainer, TrainResult, batch_file, make_trainer
from autoenv.train.batch import FORMAT, TokenTurn, TrainingBatch, TrainingSample
from autoenv.train.trainenv import TrainEnvMissing


def sample_batch() -> TrainingBatch:
    chat = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4 ✓"},
    ]
    return TrainingBatch(
        run="r",
        step=3,
        policy_version=2,
        meta={"note": "x"},
        samples=[
            TrainingSample(
                role="solver",
                task_hash="h1",
                group_id=7,
                rollout_id=31,
                policy_version=2,
                messages=chat,
                reward=1.0,
                advantage=0.5,
                turns=[
                    TokenTurn(prompt_token_ids=[1, 2, 3], completion_token_ids=[4, 5], logprobs=[-0.1, -0.2]),
                    TokenTurn(prompt_token_ids=[1, 2, 3, 4, 5, 6], completion_token_ids=[7]),
                ],
            ),
            TrainingSample(
                role="proposer",
                task_hash="h2",
                policy_version=2,
                messages=chat,
                prompt_token_ids=[1],
                completion_token_ids=[9, 9],
                logprobs=[-1.0, -2.0],
                reward=0.3,
                advantage=-0.5,
                meta={"seed_case": "c1"},
            ),
            TrainingSample(
                role="solver",
                task_hash="h1",
                group_id=7,
                rollout_id=32,
                policy_version=1,
                messages=chat,
                reward=0.0,
                advantage=-0.5,
            ),
        ],
    )


def test_batch_round_trips_through_jsonl(tmp_path: Path) -> None:
    batch = sample_batch()
    path = batch.write_jsonl(tmp_path / "b.jsonl")
    assert TrainingBatch.read_jsonl(path) == batch
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header == {
        "format": FORMAT,
        "version": 1,
        "run": "r",
        "step": 3,
        "policy_version": 2,
        "n_samples": 3,
        "meta": {"note": "x"},
    }
    plain = json.loads(lines[3])
    assert "turns" not in plain and "logprobs" not in plain  # absent, not null
    assert plain["messages"][2]["content"] == "4 ✓"
    assert not list(tmp_path.glob("*.tmp"))


def test_token_turns_views() -> None:
    batch = sample_batch()
    assert [t.completion_token_ids for t in batch.samples[0].token_turns()] == [[4, 5], [7]]
    assert batch.samples[1].token_turns() == [
        TokenTurn(prompt_token_ids=[1], completion_token_ids=[9, 9], logprobs=[-1.0, -2.0])
    ]
    assert batch.samples[2].token_turns() is None


def test_reader_rejects_foreign_and_truncated_files(tmp_path: Path) -> None:
    (tmp_path / "foreign.jsonl").write_text('{"format": "other"}\n')
    with pytest.raises(ValueError, match="not an autoenv.training-batch"):
        TrainingBatch.read_jsonl(tmp_path / "foreign.jsonl")
    path = sample_batch().write_jsonl(tmp_path / "b.jsonl")
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(ValueError, match="truncated"):
        TrainingBatch.read_jsonl(path)


def test_sample_validation() -> None:
    with pytest.raises(ValidationError, match="logprobs"):
        TokenTurn(prompt_token_ids=[1], completion_token_ids=[2, 3], logprobs=[-1.0])
    with pytest.raises(ValidationError, match="go together"):
        TrainingSample(role="solver", messages=[{"role": "user", "content": "x"}], completion_token_ids=[1])
    with pytest.raises(ValidationError, match="not both"):
        TrainingSample(
            role="solver",
            prompt_token_ids=[1],
            completion_token_ids=[2],
            turns=[TokenTurn(prompt_token_ids=[1], completion_token_ids=[2])],
        )
    with pytest.raises(ValidationError, match="messages or token ids"):
        TrainingSample(role="solver")
    with pytest.raises(ValidationError):
        TrainingSample(role="critic", messages=[{"role": "user", "content": "x"}])


def test_export_trainer_writes_batch_and_advances_version(tmp_path: Path) -> None:
    batch = sample_batch()
    trainer = make_trainer("export")
    assert isinstance(trainer, ExportTrainer) and isinstance(trainer, Trainer) and trainer.name == "export"
    result = trainer.train_step(batch, policy_dir=tmp_path / "v2", out_dir=tmp_path / "train")
    assert isinstance(result, TrainResult)
    assert (
        result.batch_path
        == batch_file(tmp_path / "train", batch)
        == tmp_path / "train" / "batches" / "step-00003.jsonl"
    )
    assert TrainingBatch.read_jsonl(result.batch_path) == batch
    # it stands for an external trainer's step: v3 is whatever that trainer makes from this batch, no local weights
    assert (result.policy_version_in, result.policy_version_out, result.n_samples, result.loss) == (2, 3, 3, None)
    assert result.checkpoint is None
    assert result.extra["roles"] == {"solver": 2, "proposer": 1}
    # rerunning the step replaces its file
    trainer.train_step(batch, policy_dir=None, out_dir=tmp_path / "train")
    assert len(list((tmp_path / "train" / "batches").iterdir())) == 1


def test_export_without_bump_keeps_version_and_checkpoint(tmp_path: Path) -> None:
    result = make_trainer("export:bump=false").train_step(sample_batch(), policy_dir=tmp_path / "v2", out_dir=tmp_path)
    assert (result.policy_version_in, result.policy_version_out, result.checkpoint) == (2, 2, tmp_path / "v2")


def test_make_trainer_specs() -> None:
    trainer = make_trainer("trl:lr=1e-4,steps=3,loss-agg=token-mean,base=/models/x,gradient_checkpointing=true")
    assert isinstance(trainer, HFTrainer) and trainer.name == "trl"
    assert (
        trainer.options["lr"] == 1e-4 and trainer.options["steps"] == 3 and trainer.options["loss-agg"] == "token-mean"
    )
    assert trainer.base == "/models/x" and trainer.gradient_checkpointing is True
    assert isinstance(make_trainer("hf"), HFTrainer)
    assert make_trainer("trl:steps=2", steps=5).options["steps"] == 5
    with pytest.raises(ValueError, match="unknown trainer"):
        make_trainer("deepspeed")
    with pytest.raises(ValueError, match="unexpected keyword"):
        make_trainer("trl:learning_rate=1")
    with pytest.raises(ValueError, match="key=value"):
        make_trainer("trl:fast")


def test_trl_trainer_without_training_env_says_how_to_make_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOENV_TRAIN_PYTHON", str(tmp_path / "no-such-python"))
    with pytest.raises(TrainEnvMissing, match="setup-train.sh"):
        make_trainer("trl").train_step(sample_batch(), policy_dir=None, out_dir=tmp_path)


def test_trl_trainer_skips_batches_without_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no non-zero advantage: no gradient, so no worker is started (even without a training env) and the version stays
    monkeypatch.setenv("AUTOENV_TRAIN_PYTHON", str(tmp_path / "no-such-python"))
    batch = sample_batch()
    for s in batch.samples:
        s.advantage = 0.0
    result = make_trainer("trl").train_step(batch, policy_dir=tmp_path / "v2", out_dir=tmp_path)
    assert (result.policy_version_out, result.checkpoint, result.n_samples) == (2, tmp_path / "v2", 0)
    assert result.batch_path.is_file()


def test_vllm_command_serves_the_checkpoint_under_a_stable_name(tmp_path: Path) -> None:
    from autoenv.train.serve import vllm_command

    command = vllm_command(tmp_path / "v3", port=8123, vllm="/opt/vllm/bin/vllm")
    assert command[:3] == ["/opt/vllm/bin/vllm", "serve", str(tmp_path / "v3")]
    assert (
        command[command.index("--served-model-name") + 1] == "policy" and command[command.index("--port") + 1] == "8123"
    )

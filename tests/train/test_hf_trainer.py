"""The ``trl`` backend for real: a tiny Llama built from a config, trained on CPU in .venv-train.

The toy objective: one shared policy sees solver and proposer samples whose
completion is "yes" (advantage +1) or "no" (advantage -1). After one training
step the policy-gradient loss must be lower, log p(yes) higher and log p(no)
lower, the weights must have changed, and the checkpoint must reload with
plain ``from_pretrained``. Skipped, with the command to fix it, when the
training env is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from autoenv.train.backends import HFTrainer, make_trainer
from autoenv.train.batch import TrainingBatch, TrainingSample
from autoenv.train.policy import read_policy_meta
from autoenv.train.trainenv import REPO_ROOT, train_python

TRAIN_PY = train_python(required=False)
pytestmark = pytest.mark.skipif(
    TRAIN_PY is None,
    reason="training env missing: run `bash scripts/setup-train.sh` (creates .venv-train with CPU torch)",
)

PROMPT = [{"role": "user", "content": "Is the sky blue? Answer yes or no."}]


def toy_batch(policy_version: int = 0) -> TrainingBatch:
    samples = []
    for i in range(8):
        good = i % 2 == 0
        samples.append(
            TrainingSample(
                role="solver" if i < 4 else "proposer",
                task_hash="toy",
                group_id=1 if i < 4 else -1,
                rollout_id=i,
                policy_version=policy_version,
                messages=PROMPT + [{"role": "assistant", "content": "yes" if good else "no"}],
                reward=1.0 if good else 0.0,
                advantage=1.0 if good else -1.0,
            )
        )
    return TrainingBatch(run="toy", step=0, policy_version=policy_version, samples=samples)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``base=tiny``: the flywheel has no v0 yet, so the backend builds it (init_policy, the CLI hook) and trains it."""
    root = tmp_path_factory.mktemp("hf")
    result = make_trainer("trl:base=tiny,lr=3e-3,steps=4,seed=0").train_step(
        toy_batch(), policy_dir=None, out_dir=root / "train"
    )
    return {"root": root, "v0": root / "train" / "v0", "result": result}


def test_init_policy_builds_a_versioned_hf_folder(trained: dict) -> None:
    v0 = trained["v0"]
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "autoenv_policy.json"):
        assert (v0 / name).is_file(), name
    meta = read_policy_meta(v0)
    assert meta["version"] == 0 and meta["backend"] == "tiny" and meta["n_params"] < 200_000


def test_training_step_lowers_loss_and_saves_next_version(trained: dict) -> None:
    result, root = trained["result"], trained["root"]
    assert result.backend == "trl"
    assert (result.policy_version_in, result.policy_version_out) == (0, 1)
    assert result.n_samples == 8 and result.extra["roles"] == {"solver": 4, "proposer": 4}
    assert result.extra["token_source"] == {"retokenised": 8}
    assert result.loss is not None and result.extra["loss_after"] < result.loss - 0.1, result.extra
    assert result.checkpoint == root / "train" / "v1" and (result.checkpoint / "model.safetensors").is_file()
    meta = read_policy_meta(result.checkpoint)
    assert meta["version"] == 1 and meta["parent_version"] == 0 and meta["parent"] == str(trained["v0"])
    assert meta["batch"] == str(result.batch_path) and TrainingBatch.read_jsonl(result.batch_path) == toy_batch()
    assert Path(result.extra["log"]).read_text().count("step ") >= 4
    assert not list((root / "train").glob(".v1.tmp-*"))


def test_checkpoint_reloads_and_moves_towards_positive_advantage(trained: dict) -> None:
    root = trained["root"]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(
        [
            str(TRAIN_PY),
            str(Path(__file__).with_name("worker_checks.py")),
            "--v0",
            str(trained["v0"]),
            "--v1",
            str(trained["result"].checkpoint),
            "--work",
            str(root / "checks"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    assert out["harbor_imported"] == []
    # reloaded with plain transformers; the toy objective moved the policy the right way
    assert out["v1_has_chat_template"] and out["v1_meta"]["version"] == 1
    assert out["logp_yes_v1"] > out["logp_yes_v0"] + 0.1, out
    assert out["logp_no_v1"] < out["logp_no_v0"] - 0.1, out
    assert out["n_params_changed"] == out["n_params"] and out["max_weight_change"] > 1e-3

    # only assistant turns are trained (end-of-turn token included), context-only turns and tool output are not
    assert out["template_source"] == "tokenizer"
    assert (
        out["masked_text"]
        == 'look\n<tool_call>{"name": "run", "arguments": {"command": "ls"}}</tool_call><|end|>done<|end|>'
    )
    assert (
        "old context" in out["unmasked_text"] and "a.txt" in out["unmasked_text"] and "done" not in out["unmasked_text"]
    )
    assert "not prefix-preserving" in out["non_prefix_template"]

    nan = None
    assert out["turn_sequences"] == [
        [[1, 2, 3, 4, 5, 6, 7], [0, 0, 0, 1, 1, 0, 1], [nan, nan, nan, -0.5, -0.25, nan, nan]],
        [[9, 9, 8], [0, 0, 1], [nan, nan, -2.0]],
    ]

    run = out["recorded_run"]
    assert run["token_source"] == {"recorded": 4, "retokenised": 1}
    assert run["skipped"] == {"recorded_ids_out_of_vocab_retokenised": 1}
    assert run["n_recorded_logprobs"] == 8 and run["roles"] == {"solver": 4, "proposer": 1}
    assert run["loss_after"] < run["loss"] and run["policy_version_out"] == 2
    assert Path(run["checkpoint"]).name == "v2"


def test_missing_policy_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="init-policy"):
        HFTrainer().train_step(toy_batch(), policy_dir=None, out_dir=tmp_path)

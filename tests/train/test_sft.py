"""``autoenv train sft`` (Cold Start and RFT) on a real run's store, and a flywheel that starts from its checkpoint.

A one-step offline flywheel writes the store: proposer attempts with their recorded episodes (some accepted) and
solver rollouts with ATIF trajectories (some with reward 1). SFT trains the tiny policy on them in the training
env with TRL's SFTTrainer; ``autoenv flywheel --init-policy`` then trains that checkpoint further.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.store.db import Store
from autoenv.train.policy import read_policy_meta
from autoenv.train.trainenv import train_python
from tests.conftest import needs_namespaces
from tests.tracking import tensorboard_scalars

pytestmark = [
    needs_namespaces,
    pytest.mark.slow,
    pytest.mark.skipif(
        train_python(required=False) is None, reason="training env missing: run `bash scripts/setup-train.sh`"
    ),
]

AUTOENV = str(Path(sys.executable).with_name("autoenv"))
SMALL = ["--group-size", "2", "--tasks-per-step", "2", "-n", "2", "--benchmark-tasks", "2"]


def autoenv(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([AUTOENV, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> dict:
    """One offline flywheel step: the scripted proposer's accepted episodes and the solver's rollouts."""
    root = tmp_path_factory.mktemp("sft")
    db = root / "fw.db"
    run = autoenv("flywheel", "--steps", "1", "--db", str(db), "--out", str(root / "fw"), "--run", "teacher",
                  "--proposals-per-step", "3", *SMALL, "--group-size", "4", "--min-accepted", "1",
                  cwd=root)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    store = Store(db)
    accepted = [a for a in store.attempts("teacher") if a["valid"] and a["calibrated"]]
    solved = [r for r in store.rollouts("teacher") if r["reward"] == 1.0]
    store.close()
    return {"root": root, "db": db, "accepted": accepted, "solved": solved}


def test_cold_start_trains_on_accepted_proposer_episodes(teacher):
    root = teacher["root"]
    cold = root / "cold"
    run = autoenv("train", "sft", "--db", str(teacher["db"]), "--out", str(cold), "--steps", "12", "--lr", "3e-3",
                  "--report-to", "tensorboard", cwd=root)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(run.stdout[run.stdout.index("{") :])
    assert result["samples"] == len(teacher["accepted"]) >= 1
    assert result["tokens_trained"] > 0 and result["loss_last"] < result["loss_first"], result
    meta = read_policy_meta(cold)
    assert meta["version"] == 0 and meta["backend"] == "sft" and meta["sft_source"] == "proposer"
    assert meta["runs"] == "teacher" and (cold / "model.safetensors").is_file()
    losses = tensorboard_scalars(root / "tensorboard", "sft-cold")["train/sft_loss"]
    assert [step for step, _ in losses] == list(range(1, 13))
    assert losses[-1][1] == pytest.approx(result["loss_last"], rel=1e-4)


def test_rejection_sampling_fine_tuning_takes_the_solved_rollouts(teacher):
    root = teacher["root"]
    run = autoenv("train", "sft", "--db", str(teacher["db"]), "--source", "solver", "--out", str(root / "rft"),
                  "--steps", "4", cwd=root)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(run.stdout[run.stdout.index("{") :])
    assert result["samples"] == len(teacher["solved"]) >= 1
    assert read_policy_meta(root / "rft")["sft_source"] == "solver"


def test_the_flywheel_starts_from_the_cold_start_checkpoint(teacher):
    root = teacher["root"]
    cold = root / "cold"
    if not cold.is_dir():
        pytest.skip("needs the cold-start checkpoint of the test above")
    args = ["flywheel", "--steps", "1", "--db", str(teacher["db"]), "--out", str(root / "fw"), "--run", "student",
            "--trainer", "trl:lr=1e-3", *SMALL, "--init-policy", str(cold)]  # fmt: skip
    run = autoenv(*args, cwd=root)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    v0, v1 = root / "fw" / "student" / "train" / "v0", root / "fw" / "student" / "train" / "v1"
    assert read_policy_meta(v0)["init_from"] == str(cold) and read_policy_meta(v0)["backend"] == "sft"
    assert (v0 / "model.safetensors").read_bytes() == (cold / "model.safetensors").read_bytes()
    assert read_policy_meta(v1)["parent"] == str(v0), "step 0 trained the cold-start policy"
    # the run resumed from another starting checkpoint is refused (two starts in one curve)
    other = autoenv(*args[:-1], str(root / "rft"), cwd=root)
    assert other.returncode != 0 and "another configuration" in other.stdout + other.stderr


def test_sft_says_what_is_missing(teacher, tmp_path):
    none = autoenv("train", "sft", "--db", str(teacher["db"]), "--run", "nope", "--out", str(tmp_path / "x"),
                   cwd=tmp_path)  # fmt: skip
    assert none.returncode == 2 and "no run named nope" in none.stdout + none.stderr
    assert not (tmp_path / "x").exists()
    bad = autoenv("flywheel", "--init-policy", str(tmp_path), "--trainer", "trl", "--db", str(tmp_path / "y.db"),
                  "--out", str(tmp_path / "fw"), cwd=tmp_path)  # fmt: skip
    assert bad.returncode != 0 and "not a save_pretrained model folder" in bad.stdout + bad.stderr
    table = autoenv("flywheel", "--init-policy", str(tmp_path), "--db", str(tmp_path / "y.db"), cwd=tmp_path)
    assert table.returncode != 0 and "only the trl trainer and --serve" in table.stdout + table.stderr

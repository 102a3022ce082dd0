"""What every trainer is: the protocol the flywheel calls, the result it reads back, where batches are written.

Its own module, below every backend (:mod:`autoenv.train.backends` picks one by name, :mod:`autoenv.train.table`
is one), so a backend never imports the module that chooses among them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from autoenv.train.batch import TrainingBatch

__all__ = ["TrainResult", "Trainer", "batch_file"]


class TrainResult(BaseModel):
    backend: str
    n_samples: int
    policy_version_in: int
    policy_version_out: int
    #: What the policy-gradient loss was on this batch before the update (None: no update happened).
    loss: float | None = None
    #: The checkpoint that serves ``policy_version_out`` (None when there are no local weights, e.g. export).
    checkpoint: Path | None = None
    batch_path: Path | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Trainer(Protocol):
    name: str

    def train_step(self, batch: TrainingBatch, *, policy_dir: Path | None, out_dir: Path) -> TrainResult:
        """Train on ``batch`` starting from ``policy_dir``; new checkpoints and batch files go under ``out_dir``."""
        ...


def batch_file(out_dir: Path | str, batch: TrainingBatch) -> Path:
    """Where a step's batch is written: one file per step, so a rerun replaces it rather than appending."""
    return Path(out_dir) / "batches" / f"step-{batch.step:05d}.jsonl"

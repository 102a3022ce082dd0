"""Cold Start and rejection-sampling fine-tuning: supervised training on the episodes that worked.

The paper starts its shared policy from a Cold-Start checkpoint: SFT on proposer episodes of strong models that
led to accepted environments. autoenv records every proposer episode as it was lived (issue 15) and every solver
rollout's ATIF trajectory, so both are one query away:

- ``proposer``: episodes of attempts whose task was accepted (valid and calibrated; ``include_uncalibrated``
  widens it to every valid task);
- ``solver``: trajectories of rollouts with reward 1 (rejection-sampling fine-tuning, RFT).

:func:`collect_sft_samples` reads them from a store into a training batch file (assistant turns trained, the
rest masked, as :mod:`autoenv.train.sft_worker` encodes them) and :func:`run_sft` trains in the training env with
TRL's ``SFTTrainer``, saving a checkpoint ``autoenv flywheel --init-policy`` starts from. No torch here.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from autoenv.errors import TaskError
from autoenv.store.db import Store
from autoenv.train.batch import TrainingBatch, TrainingSample
from autoenv.train.build import proposer_sample, solver_sample
from autoenv.vocab import SftSource

__all__ = ["SftSource", "collect_sft_samples", "run_sft"]


def _samples(
    rows: Iterable[dict[str, Any]], keep: Callable[[dict[str, Any]], Any], sample: Callable[..., TrainingSample | None]
) -> tuple[list[TrainingSample], int]:
    """The kept rows as samples of advantage 1, and how many kept rows had no record to make one from."""
    samples: list[TrainingSample] = []
    missing = 0
    for row in rows:
        if not keep(row):
            continue
        if (made := sample(row, advantage=1.0)) is None:
            missing += 1
        else:
            samples.append(made)
    return samples, missing


def _proposer_samples(store: Store, runs: list[str], include_uncalibrated: bool) -> tuple[list[TrainingSample], int]:
    rows = (row for run in runs for row in store.attempts(run=run))
    return _samples(rows, lambda r: r["valid"] and (r["calibrated"] or include_uncalibrated), proposer_sample)


def _solver_samples(store: Store, runs: list[str], min_reward: float) -> tuple[list[TrainingSample], int]:
    rows = (row for run in runs for row in store.rollouts(run=run))
    return _samples(rows, lambda r: r["reward"] is not None and r["reward"] >= min_reward, solver_sample)


def collect_sft_samples(
    store: Store,
    *,
    source: SftSource = SftSource.PROPOSER,
    runs: list[str] | None = None,
    include_uncalibrated: bool = False,
    min_reward: float = 1.0,
) -> TrainingBatch:
    """The store's successful episodes of ``source`` (every run unless ``runs``), as one batch to imitate."""
    known = store.run_names()
    runs = runs or known
    unknown = sorted(set(runs) - set(known))
    if unknown:
        raise TaskError(f"{store.url}: no run named {', '.join(unknown)} (runs: {', '.join(known) or 'none'})")
    if source == SftSource.PROPOSER:
        samples, missing = _proposer_samples(store, runs, include_uncalibrated)
    else:
        samples, missing = _solver_samples(store, runs, min_reward)
    return TrainingBatch(
        run="+".join(runs),
        step=0,
        policy_version=0,
        samples=samples,
        meta={"sft_source": source.value, "missing_episodes": missing},
    )


def run_sft(
    batch: TrainingBatch,
    *,
    policy: Path | str,
    out: Path | str,
    steps: int = 100,
    lr: float = 1e-4,
    batch_size: int = 4,
    max_length: int = 4096,
    seed: int = 0,
    timeout: float | None = 3600,
) -> dict[str, Any]:
    """Fine-tune ``policy`` (a folder, or ``tiny`` to build the tiny offline policy first) on ``batch``."""
    from autoenv.train import trainenv

    if not batch.samples:
        what = batch.meta.get("sft_source", "sft")
        raise TaskError(
            f"no {what} episodes to train on in run(s) {batch.run or '(none)'}"
            + (
                f" ({batch.meta['missing_episodes']} recorded without their episode file)"
                if batch.meta.get("missing_episodes")
                else ""
            )  # fmt: skip
        )
    out = Path(out).resolve()
    with tempfile.TemporaryDirectory(prefix="autoenv-sft-") as tmp:
        if str(policy) == "tiny":
            from autoenv.train.tiny import init_policy

            policy = init_policy(Path(tmp) / "tiny")
        if not Path(policy).is_dir():
            raise TaskError(f"policy {policy}: not a folder (a save_pretrained checkpoint, or `tiny`)")
        data = batch.write_jsonl(Path(tmp) / "sft.jsonl")
        meta = {"sft_source": batch.meta.get("sft_source"), "runs": batch.run}
        args = ["--data", str(data), "--policy", str(Path(policy).resolve()), "--out", str(out)]
        args += ["--steps", str(steps), "--lr", str(lr), "--batch-size", str(batch_size)]
        args += ["--max-length", str(max_length), "--seed", str(seed), "--meta", json.dumps(meta)]
        result = trainenv.run_module("autoenv.train.sft_worker", args, timeout=timeout)
    result["samples"] = len(batch.samples)
    return result

"""The ``table`` trainer: one GRPO step on the offline learned policy's preference table.

The learned policy (:mod:`autoenv.agents.policies.learned`) draws each
episode's strategy from a softmax over logits per decision key. Its policy
gradient is exact and cheap: for a sample that chose option ``s`` under
probabilities ``p`` with advantage ``A``, ``d log p(s) / d logits = e_s - p``,
so one step is ``logits += lr * mean_i(A_i * (e_{s_i} - p_i))`` per key. The
choice and the probabilities it was drawn with are read from what the episode
recorded (the solver's trajectory, ``extra.decision``; the proposer episode's
``decision``), never recomputed: the update is on what the policy actually did.

The new table is saved as ``<out_dir>/v{N+1}/table.json`` with the usual
``autoenv_policy.json``, which the next step's rollouts load (``table=...``).
A batch without a recorded decision trains nothing for that sample (counted in
``extra.skipped``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from autoenv.train.batch import TrainingBatch
from autoenv.train.policy import checkpoint_dir, write_policy_meta
from autoenv.train.trainer import TrainResult, batch_file

if TYPE_CHECKING:
    from autoenv.agents.policies.learned import PolicyTable


def recorded_decisions(sample: Any) -> list[dict[str, Any]]:
    """The learned policy's draws behind a sample: the proposer episode's (meta) or the solver trajectory's first
    step's."""
    meta = sample.meta or {}
    if meta.get("decisions"):
        return list(meta["decisions"])
    if meta.get("decision"):
        return [meta["decision"]]
    path = meta.get("trajectory_path")
    if not path or not Path(path).is_file():
        return []
    for step in json.loads(Path(path).read_text()).get("steps") or []:
        found = (step.get("extra") or {}).get("decision")
        if found and "strategy" in found:
            return [found]
    return []


class TableTrainer:
    """Policy-gradient step on the learned policy's logits (see the module docstring)."""

    name: ClassVar[str] = "table"

    def __init__(self, *, lr: float = 1.0, proposer_weight: float = 1.0):
        if lr <= 0:
            raise ValueError(f"lr must be positive, got {lr}")
        self.lr = lr
        self.proposer_weight = proposer_weight

    def train_step(self, batch: TrainingBatch, *, policy_dir: Path | None, out_dir: Path) -> TrainResult:
        from autoenv.agents.policies.learned import PolicyTable

        path = batch.write_jsonl(batch_file(out_dir, batch))
        table = (
            PolicyTable.load(policy_dir)
            if policy_dir is not None and (Path(policy_dir) / "table.json").is_file()
            else PolicyTable()
        )
        draws = []
        skipped = 0
        for sample in batch.samples:
            decisions = recorded_decisions(sample)
            if not decisions or sample.advantage == 0.0:
                skipped += 1
                continue
            draws.append((sample.advantage, sample.role, decisions))
        loss, used = policy_gradient_step(table, draws, lr=self.lr, proposer_weight=self.proposer_weight)
        version_out = batch.policy_version + (1 if used else 0)
        if not used:
            return TrainResult(
                backend=self.name,
                n_samples=len(batch.samples),
                policy_version_in=batch.policy_version,
                policy_version_out=batch.policy_version,
                loss=None,
                checkpoint=Path(policy_dir) if policy_dir else None,
                batch_path=path,
                extra={"skipped": skipped},
            )
        table.version = version_out
        out = checkpoint_dir(out_dir, version_out)
        table.save(out)
        write_policy_meta(
            out,
            version=version_out,
            parent=str(policy_dir) if policy_dir else None,
            parent_version=batch.policy_version,
            run=batch.run,
            step=batch.step,
            backend=self.name,
            batch=str(path),
            n_samples=used,
            loss=loss / used,
        )
        return TrainResult(
            backend=self.name,
            n_samples=len(batch.samples),
            policy_version_in=batch.policy_version,
            policy_version_out=version_out,
            loss=loss / used,
            checkpoint=out,
            batch_path=path,
            extra={
                "skipped": skipped,
                "keys": sorted({f"{d.get('role', r)}:{d['key']}" for _, r, ds in draws for d in ds}),
            },
        )


def policy_gradient_step(
    table: PolicyTable,
    draws: Iterable[tuple[float, str, list[dict[str, Any]]]],
    *,
    lr: float,
    proposer_weight: float = 1.0,
) -> tuple[float, int]:
    """One policy-gradient step on ``table`` in place: ``draws`` are (advantage, role, the episode's recorded
    decisions) with a non-zero advantage. Per decision key, the mean over the draws that made that decision of
    ``A * (e_s - p)`` (the proposer's weighted by ``proposer_weight``), times ``lr``. Returns the summed loss
    ``-A log p(s)`` and the number of draws used. The bench's model of the loop (bench/flywheel_model.py) steps
    its tables with this same function."""
    grads: dict[tuple[str, str], dict[str, float]] = {}
    counts: dict[tuple[str, str], int] = {}
    loss, used = 0.0, 0
    for advantage, default_role, decisions in draws:
        for decision in decisions:  # the episode's log-probability is the sum over its draws
            role = decision.get("role", default_role)
            probs: dict[str, float] = decision["probs"]
            weight = advantage * (proposer_weight if role == "proposer" else 1.0)
            key = (role, decision["key"])
            grad = grads.setdefault(key, {o: 0.0 for o in probs})
            for option, p in probs.items():
                grad[option] = grad.get(option, 0.0) + weight * ((1.0 if option == decision["strategy"] else 0.0) - p)
            counts[key] = counts.get(key, 0) + 1
            loss -= advantage * _log(probs.get(decision["strategy"], 0.0))
        used += 1
    for (role, key), grad in grads.items():
        logits = getattr(table, role).setdefault(key, {})
        for option, g in grad.items():
            logits[option] = logits.get(option, 0.0) + lr * g / counts[(role, key)]
    return loss, used


def _log(p: float) -> float:
    return math.log(max(p, 1e-12))

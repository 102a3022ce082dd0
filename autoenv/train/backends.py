"""Training backends behind one interface, chosen by name: ``export`` or ``trl`` (alias ``hf``).

The flywheel only ever calls ``make_trainer(spec).train_step(batch, policy_dir=..., out_dir=...)``
and reads back a :class:`TrainResult`: the version the next rollouts must use
and the checkpoint that serves it. Backends differ in where the update
happens:

- ``export`` writes the batch (the documented JSONL of :mod:`autoenv.train.batch`)
  for an external trainer. It stands for that trainer's step: the version
  advances to N+1, the weights an external trainer makes from batch N and
  publishes at the serving endpoint (which must serve them before the next
  step's rollouts start), so store rows are labelled by the step's policy just
  as with ``trl``. No local checkpoint exists, so ``checkpoint`` is None.
  ``export:bump=false`` keeps version N instead, for a pure data dump where no
  trainer consumes the batches and the served weights never change.
- ``trl`` runs one GRPO step on a Hugging Face causal LM in the training
  env (``.venv-train``, see :mod:`autoenv.train.trainenv`) via
  :mod:`autoenv.train.hf_worker`, and returns the new checkpoint
  ``<out_dir>/v{N+1}``.

Options ride on the spec like the solver's: ``trl:lr=1e-5,steps=2,base=/models/qwen``.
``base`` is the checkpoint to start from when the flywheel has none for the
batch's version yet (``base=tiny`` builds the tiny offline policy as ``<out_dir>/v0``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from autoenv.spec import split_spec
from autoenv.train.batch import TrainingBatch
from autoenv.train.policy import POLICY_META, checkpoint_dir
from autoenv.train.table import TableTrainer
from autoenv.train.trainer import Trainer, TrainResult, batch_file

__all__ = ["TrainResult", "Trainer", "ExportTrainer", "HFTrainer", "TRAINERS", "make_trainer", "batch_file"]


class ExportTrainer:
    """Write the batch for an external trainer, whose step it stands for (see the module docstring)."""

    name: ClassVar[str] = "export"

    def __init__(self, *, bump: bool = True):
        self.bump = bump

    def train_step(self, batch: TrainingBatch, *, policy_dir: Path | None, out_dir: Path) -> TrainResult:
        path = batch.write_jsonl(batch_file(out_dir, batch))
        version_out = batch.policy_version + (1 if self.bump else 0)
        roles: dict[str, int] = {}
        for sample in batch.samples:
            roles[sample.role] = roles.get(sample.role, 0) + 1
        return TrainResult(
            backend=self.name,
            n_samples=len(batch.samples),
            policy_version_in=batch.policy_version,
            policy_version_out=version_out,
            checkpoint=None if self.bump else policy_dir,
            batch_path=path,
            extra={"roles": roles, "bumped": self.bump},
        )


class HFTrainer:
    """GRPO step on a Hugging Face causal LM, run by :mod:`autoenv.train.hf_worker` in the training env."""

    name: ClassVar[str] = "trl"

    def __init__(
        self,
        *,
        base: str | Path | None = None,
        lr: float = 1e-5,
        steps: int = 1,
        micro_batch_size: int = 4,
        max_length: int = 4096,
        clip_eps: float = 0.2,
        loss_agg: str = "sum",
        grad_clip: float = 1.0,
        weight_decay: float = 0.0,
        proposer_weight: float = 1.0,
        seed: int = 0,
        device: str = "auto",
        gradient_checkpointing: bool = False,
        timeout: float | None = None,
    ):
        if loss_agg not in ("sum", "token-mean"):
            raise ValueError(f"loss_agg must be 'sum' or 'token-mean', got {loss_agg!r}")
        self.base = base
        self.options: dict[str, Any] = {
            "lr": lr,
            "steps": steps,
            "micro-batch-size": micro_batch_size,
            "max-length": max_length,
            "clip-eps": clip_eps,
            "loss-agg": loss_agg,
            "grad-clip": grad_clip,
            "weight-decay": weight_decay,
            "proposer-weight": proposer_weight,
            "seed": seed,
            "device": device,
        }
        self.gradient_checkpointing = gradient_checkpointing
        self.timeout = timeout

    def resolve_policy(self, policy_dir: Path | None, out_dir: Path, version: int) -> Path:
        """The checkpoint to train: the flywheel's, else ``base`` (``tiny`` builds one), else a clear error."""
        if policy_dir is not None:
            if not Path(policy_dir).is_dir():
                raise FileNotFoundError(f"policy checkpoint {policy_dir} does not exist")
            return Path(policy_dir)
        if self.base == "tiny":
            target = checkpoint_dir(out_dir, version)
            if not (target / POLICY_META).is_file():  # written last: a half-built v0 is rebuilt
                from autoenv.train.tiny import init_policy

                init_policy(target)
            return target
        if self.base is not None:
            if not Path(self.base).is_dir():
                raise FileNotFoundError(f"base policy {self.base} does not exist (a save_pretrained folder is needed)")
            return Path(self.base)
        raise FileNotFoundError(
            f"no policy checkpoint for version {version}: expected {checkpoint_dir(out_dir, version)}. "
            f"Create one with `autoenv train init-policy --out {checkpoint_dir(out_dir, version)}` (tiny offline "
            f"model), "
            "copy a Hugging Face model folder there, or use the trainer spec `trl:base=DIR` (or `trl:base=tiny`)."
        )

    def train_step(self, batch: TrainingBatch, *, policy_dir: Path | None, out_dir: Path) -> TrainResult:
        from autoenv.train import trainenv

        out_dir = Path(out_dir).resolve()
        path = batch.write_jsonl(batch_file(out_dir, batch))
        trainable = [s for s in batch.samples if s.advantage != 0.0]
        if not trainable:  # skip the subprocess: no gradient, nothing to load
            return TrainResult(
                backend=self.name,
                n_samples=0,
                policy_version_in=batch.policy_version,
                policy_version_out=batch.policy_version,
                checkpoint=policy_dir,
                batch_path=path,
                extra={"skipped": "no sample with a non-zero advantage"},
            )
        trainenv.train_python()  # fail before building anything if the env is missing
        policy = self.resolve_policy(policy_dir, out_dir, batch.policy_version)
        result_path = out_dir / "results" / f"step-{batch.step:05d}.json"
        args = [
            "--batch",
            str(path),
            "--policy",
            str(Path(policy).resolve()),
            "--out",
            str(out_dir),
            "--result",
            str(result_path),
        ]
        for key, value in self.options.items():
            args += [f"--{key}", str(value)]
        if self.gradient_checkpointing:
            args.append("--gradient-checkpointing")
        log_path = out_dir / "logs" / f"step-{batch.step:05d}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        result = trainenv.run_module("autoenv.train.hf_worker", args, timeout=self.timeout, log_path=log_path)
        extra = {
            k: v
            for k, v in result.items()
            if k not in ("loss", "n_samples", "checkpoint", "policy_version_in", "policy_version_out", "backend")
        }
        extra["log"] = str(log_path)
        return TrainResult(
            backend=self.name,
            n_samples=result["n_samples"],
            policy_version_in=result["policy_version_in"],
            policy_version_out=result["policy_version_out"],
            loss=result.get("loss"),
            checkpoint=Path(result["checkpoint"]) if result.get("checkpoint") else None,
            batch_path=path,
            extra=extra,
        )


TRAINERS: dict[str, Any] = {"export": ExportTrainer, "trl": HFTrainer, "hf": HFTrainer, "table": TableTrainer}


def make_trainer(spec: str = "export", **overrides: Any) -> Trainer:
    """A trainer from ``name[:key=value,...]`` (e.g. ``trl:lr=1e-4,steps=4,base=tiny``); ``overrides`` win over the
    spec."""
    name, options = split_spec(spec, known=TRAINERS.keys(), what="trainer spec")
    name = name.lower()
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}; choose one of {', '.join(sorted(TRAINERS))}")
    options = {key.replace("-", "_"): value for key, value in options.items()} | overrides
    try:
        return TRAINERS[name](**options)
    except TypeError as exc:
        raise ValueError(f"trainer spec {spec!r}: {exc}") from None

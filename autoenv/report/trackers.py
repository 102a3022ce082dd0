"""Each flywheel step's metrics where RL people read them: TensorBoard event files, or trackio.

The store stays the record (``autoenv report`` draws from it); a tracker is a second, live view that trainers'
users already watch (TRL, SkyRL and prime-rl all ``report_to`` one). Metric names are grouped by stage
(``solver/benchmark_score``, ``proposer/valid_rate``, ``train/loss``, ``time/collect_sec``) so each tool shows one
panel per stage. The writers are optional dependencies (``pip install tensorboardX`` or ``trackio``); asking for
one that is not installed is an error that says which package to install, before the run starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from autoenv.errors import MachineError
from autoenv.vocab import ReportTo

#: Which panel each metric the flywheel records goes in (anything else goes under ``other/``).
GROUPS = {
    "benchmark_score": "solver",
    "solver_pass_rate": "solver",
    "useful_group_rate": "solver",
    "groups": "solver",
    "proposer_valid_rate": "proposer",
    "proposer_valid_low": "proposer",
    "proposer_valid_high": "proposer",
    "proposer_reward_mean": "proposer",
    "proposals": "proposer",
    "accepted": "proposer",
    "loss": "train",
    "loss_after": "train",
    "sft_loss": "train",
    "samples": "train",
    "tokens": "train",
    "propose_sec": "time",
    "collect_sec": "time",
    "train_sec": "time",
    "benchmark_sec": "time",
}


def tag(name: str) -> str:
    return f"{GROUPS.get(name, 'other')}/{name}"


class Tracker(Protocol):
    def log(self, step: int, metrics: dict[str, float]) -> None: ...

    def close(self) -> None: ...


class NoTracker:
    def log(self, step: int, metrics: dict[str, float]) -> None:
        pass

    def close(self) -> None:
        pass


class TensorBoardTracker:
    """Scalars in TensorBoard's event format (tensorboardX's writer; no TensorFlow or torch needed)."""

    def __init__(self, logdir: Path, config: dict[str, Any]):
        from tensorboardX import SummaryWriter

        self.logdir = logdir
        self._writer = SummaryWriter(logdir=str(logdir))
        self._writer.add_text("config", "```\n" + json.dumps(config, indent=2, default=str) + "\n```", 0)

    def log(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self._writer.add_scalar(tag(name), float(value), step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class TrackioTracker:
    """Hugging Face's trackio: a local SQLite-backed tracker with a dashboard (``trackio show``)."""

    def __init__(self, project: str, run: str, config: dict[str, Any]):
        import trackio

        self._trackio = trackio
        self._run = trackio.init(project=project, name=run, config=json.loads(json.dumps(config, default=str)))

    def log(self, step: int, metrics: dict[str, float]) -> None:
        self._trackio.log({tag(k): float(v) for k, v in metrics.items()}, step=step)

    def close(self) -> None:
        self._trackio.finish()


_PACKAGES = {ReportTo.TENSORBOARD: ("tensorboardX", "tensorboardX"), ReportTo.TRACKIO: ("trackio", "trackio")}


def require(kind: ReportTo) -> None:
    """Fail before a run starts when the tracker's package is missing."""
    if kind not in _PACKAGES:
        return
    module, package = _PACKAGES[kind]
    try:
        __import__(module)
    except ImportError:
        raise MachineError(
            f"--report-to {kind.value} needs the {package} package: .venv/bin/pip install {package} "
            "(scripts/setup.sh installs it with the test extras)"
        ) from None


def make_tracker(kind: ReportTo, *, out_dir: Path, run: str, config: dict[str, Any]) -> Tracker:
    """The tracker for ``--report-to``: TensorBoard under ``out_dir/tensorboard/run``, trackio in project
    ``autoenv`` (its own store, ``~/.cache/huggingface/trackio``), or none."""
    require(kind)
    if kind == ReportTo.TENSORBOARD:
        return TensorBoardTracker(out_dir / "tensorboard" / run, config)
    if kind == ReportTo.TRACKIO:
        return TrackioTracker("autoenv", run, config)
    return NoTracker()


__all__ = ["GROUPS", "NoTracker", "TensorBoardTracker", "Tracker", "TrackioTracker", "make_tracker", "require", "tag"]

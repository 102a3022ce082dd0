"""Record an episode as an ATIF trajectory (Harbor's ``harbor.models.trajectories``).

Two files are kept in the agent's logs dir, both rewritten/extended after
every turn so a killed trial still leaves a usable record:

- ``trajectory.json``: the whole :class:`~harbor.models.trajectories.Trajectory`,
  the file Harbor's viewer, ``harbor traces export`` and the trial's
  model-usage backfill read;
- ``trajectory.jsonl``: one ATIF :class:`~harbor.models.trajectories.Step` per
  line, appended as steps complete, for streaming consumers and SFT/RL export
  that want to tail a running episode.

Every step is validated by Harbor's pydantic models when it is built, and the
whole trajectory when it is written, so nothing off-spec reaches disk.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harbor.models.trajectories import Agent, FinalMetrics, Step, Trajectory
from harbor.utils.trajectory_utils import format_trajectory_json

TRAJECTORY_JSON = "trajectory.json"
TRAJECTORY_JSONL = "trajectory.jsonl"


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class TrajectoryRecorder:
    """Steps of one episode, numbered from 1, flushed to both files on demand."""

    def __init__(
        self, logs_dir: Path, *, agent: Agent, session_id: str | None = None, extra: dict[str, Any] | None = None
    ):
        self.logs_dir = Path(logs_dir)
        self.agent = agent
        self.session_id = session_id
        self.extra = extra
        self.steps: list[Step] = []
        self.final_metrics: FinalMetrics | None = None
        self._flushed = 0
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / TRAJECTORY_JSONL).write_text("")

    def add(self, **fields: Any) -> Step:
        """Append a step (``step_id`` and ``timestamp`` are filled in)."""
        fields.setdefault("timestamp", now_iso())
        step = Step(step_id=len(self.steps) + 1, **fields)
        self.steps.append(step)
        return step

    def update(self, step_id: int, **fields: Any) -> None:
        """Change a step that has not been flushed yet (e.g. the system prompt after a tool-mode fallback)."""
        index = step_id - 1
        if index < self._flushed:
            raise ValueError(f"step {step_id} is already on disk")
        self.steps[index] = Step.model_validate({**self.steps[index].model_dump(exclude_none=True), **fields})

    def trajectory(self) -> Trajectory:
        return Trajectory(
            session_id=self.session_id,
            agent=self.agent,
            steps=self.steps,
            final_metrics=self.final_metrics,
            extra=self.extra,
        )

    def flush(self) -> None:
        """Append new steps to the JSONL file and rewrite the JSON file."""
        if not self.steps:
            return
        trajectory = self.trajectory()  # validates step ids and tool-call references
        with open(self.logs_dir / TRAJECTORY_JSONL, "a", encoding="utf-8") as f:
            for step in self.steps[self._flushed :]:
                f.write(json.dumps(step.model_dump(exclude_none=True, mode="json"), ensure_ascii=False) + "\n")
        self._flushed = len(self.steps)
        tmp = self.logs_dir / (TRAJECTORY_JSON + ".tmp")
        tmp.write_text(format_trajectory_json(trajectory.to_json_dict()), encoding="utf-8")
        os.replace(tmp, self.logs_dir / TRAJECTORY_JSON)


def load_steps_jsonl(path: Path | str) -> list[Step]:
    """Steps from a ``trajectory.jsonl``, each validated against ATIF."""
    with open(path, encoding="utf-8") as f:
        return [Step.model_validate_json(line) for line in f if line.strip()]


def load_trajectory(logs_dir: Path | str) -> Trajectory:
    """The ``trajectory.json`` of an agent logs dir, validated against ATIF."""
    return Trajectory.model_validate_json((Path(logs_dir) / TRAJECTORY_JSON).read_text(encoding="utf-8"))

"""The flywheel's events as log records: one sentence a person reads, and the same fields for a machine.

Each event (``propose``, ``collect``, ``rollout``, ``train``, ``step``, ``step_done``, ``serve``, ``warning``) is
logged on the ``autoenv.flywheel`` logger with its message from :func:`describe` and its fields, made JSON-safe
(:func:`fields`), under ``record.event`` and ``record.fields``; the CLI's one logging setup
(:mod:`autoenv.cli.logs`) writes them as text lines or JSON lines. A library caller that sets up no logging sees
only the warnings (Python's last-resort handler).
"""

from __future__ import annotations

import logging
from enum import Enum
from pathlib import Path
from typing import Any

log = logging.getLogger("autoenv.flywheel")

#: Events too many to read one a line (a rollout each); a person's log shows them only at DEBUG.
DETAIL = frozenset({"rollout"})


def fields(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with enums as their values and paths as text, so a JSON line holds what the text line says."""

    def plain(value: Any) -> Any:
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    return {str(k): plain(v) for k, v in data.items()}


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def describe(event: str, data: dict[str, Any]) -> str:
    """The event as a person reads it, e.g. ``propose config-repair-guessing (feedback)``."""
    d = fields(data)
    if event == "propose":
        return f"propose {d.get('seed_case')} ({d.get('method')})"
    if event == "collect":
        return f"collect {d.get('tasks')} tasks x {d.get('group_size')} rollouts"
    if event == "rollout":
        reward = d.get("reward")
        return f"rollout {d.get('task')}: " + ("no reward (error)" if reward is None else f"reward {reward:g}")
    if event == "train":
        return f"train {d.get('samples')} samples ({d.get('backend')})"
    if event == "step":
        return f"step {d.get('step')} starts ({d['step'] + 1} of {d.get('of')})" if "step" in d else "step"
    if event == "step_done":
        text = (
            f"step {d.get('step')} done: {d.get('accepted')}/{d.get('proposals')} proposals accepted, "
            f"{d.get('useful_groups')}/{d.get('groups')} groups useful"
        )
        if d.get("benchmark_score") is not None:
            text += f", benchmark {_number(d['benchmark_score'])}"
        return text + f", policy v{d.get('policy_version_in')} -> v{d.get('policy_version_out')}"
    if event == "serve":
        return str(d["message"]) if "message" in d else f"serve policy v{d.get('version')} ({d.get('checkpoint')})"
    if "message" in d:
        return str(d["message"])
    return event + "".join(f" {k}={_number(v)}" for k, v in d.items())


def emit(event: str, data: dict[str, Any]) -> None:
    """Log one flywheel event (warnings at WARNING, rollouts at DEBUG, the rest at INFO)."""
    level = logging.WARNING if event == "warning" else logging.DEBUG if event in DETAIL else logging.INFO
    if log.isEnabledFor(level):
        log.log(level, describe(event, data), extra={"event": event, "fields": fields(data)})

"""Helpers shared by the agent tests (a plain module, so test files can import it by name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autoenv.sandbox.local.host import runtime_problem

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_TASKS = REPO / "examples" / "tasks"

_ns_why = runtime_problem()
_ns_ok = _ns_why is None
needs_sandbox = pytest.mark.skipif(not _ns_ok, reason=f"local backend unavailable: {_ns_why}")

HELLO_DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nRUN echo built > /app/built.txt\n"


def bundled(name: str) -> Path:
    """A bundled example task, or a skip while it is still being written."""
    task = EXAMPLE_TASKS / name
    if not (task / "task.toml").exists():
        pytest.skip(f"bundled task {name} is not there (yet)")
    return task


def trial_files(trial_dir: str | Path) -> dict[str, Any]:
    """result.json, the ATIF trajectory and the JSONL steps of a finished trial."""
    trial = Path(trial_dir)
    agent = trial / "agent"
    return {
        "result": json.loads((trial / "result.json").read_text()),
        "trajectory": json.loads((agent / "trajectory.json").read_text()),
        "jsonl": [json.loads(line) for line in (agent / "trajectory.jsonl").read_text().splitlines() if line.strip()],
        "agent_dir": agent,
    }

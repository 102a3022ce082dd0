"""What a check quotes from a trial: its verdict in a few words, the ends of its outputs, the time of a phase, and
the advice for a verifier or a solution that needed the network it did not have.

Trimmed for a task proposer (an LLM) to act on without reading our code (see :mod:`.base`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from autoenv.trials.runner import TrialOutcome

#: What a verifier prints when it needs the network and has none (DNS, connect, pip, apt, npm).
NETWORK_FAILURE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|Failed to establish a new connection|Could not connect to|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|No matching distribution found|Failed to fetch http|unable to access 'http",
    re.I,
)

TAIL_CHARS = 1500


def tail(text: str | None, limit: int = TAIL_CHARS) -> str:
    """The end of an output, where errors are; marked when cut."""
    if not text:
        return ""
    text = text.strip()
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def read_file(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def phase_seconds(trial_dir: str, phase: str) -> float | None:
    """Duration of a trial phase (``agent_execution``, ``verifier``, ...) from Harbor's result.json."""
    try:
        data = json.loads((Path(trial_dir) / "result.json").read_text())
        timing = data.get(phase) or {}
        start, end = timing.get("started_at"), timing.get("finished_at")
        if not start or not end:
            return None
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except (OSError, ValueError, TypeError):
        return None


def trial_evidence(outcome: TrialOutcome, *, agent_log: str | None = None) -> dict[str, Any]:
    """What a reader needs from one trial: verdict, error, and the ends of its outputs."""
    evidence: dict[str, Any] = {
        "reward": outcome.reward,
        "error": outcome.error,
        "trial_dir": outcome.trial_dir,
        "seconds": outcome.duration_sec,
    }
    if outcome.error_message:
        evidence["error_message"] = tail(outcome.error_message, 800)
    if outcome.trial_dir:
        verifier_out = tail(read_file(Path(outcome.trial_dir) / "verifier" / "test-stdout.txt"))
        if verifier_out:
            evidence["verifier_output"] = verifier_out
        if agent_log:
            agent_out = tail(read_file(Path(outcome.trial_dir) / "agent" / agent_log))
            if agent_out:
                evidence["agent_output"] = agent_out
            exit_code = read_file(Path(outcome.trial_dir) / "agent" / "exit-code.txt").strip()
            if exit_code:
                evidence["agent_exit_code"] = exit_code
    return evidence


def first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe(outcome: TrialOutcome) -> str:
    if outcome.error:
        return f"error {outcome.error}" + (f" ({first_line(outcome.error_message)})" if outcome.error_message else "")
    return f"reward {outcome.reward:g}" if outcome.reward is not None else "no reward"


def network_failure(evidence: dict[str, Any]) -> str | None:
    """The line of a trial's output that shows it needed the network and had none, if any."""
    for key in ("verifier_output", "agent_output", "error_message"):
        for line in str(evidence.get(key) or "").splitlines():
            if NETWORK_FAILURE.search(line):
                return line.strip()[:300]
    return None


def network_advice(evidence: dict[str, Any], offline: bool) -> str:
    line = network_failure(evidence)
    if not line or not offline:
        return ""
    if line in str(evidence.get("verifier_output") or ""):
        return (
            f'This is not a wrong solution: the verifier needs the network at grading time ("{line}"), and the task '
            'declares network_mode = "no-network". Install what tests/test.sh downloads (pytest, uv, curl, packages) '
            "in environment/Dockerfile instead of at grading time.\n"
        )
    return (
        f'solution/solve.sh needs the network ("{line}"), and the task declares network_mode = "no-network": the '
        "agent has none either. Install what it downloads in environment/Dockerfile, or solve the task without it.\n"
    )


def outputs_block(evidence: dict[str, Any], *, verifier_silent_hint: bool = False) -> str:
    parts = []
    if verifier_silent_hint and not evidence.get("verifier_output") and evidence.get("trial_dir"):
        parts.append(
            "tests/test.sh printed nothing; make it print what it checks and why a check fails, so failures can be "
            "diagnosed."
        )
    if evidence.get("agent_output"):
        parts.append(f"Output of solution/solve.sh:\n{evidence['agent_output']}")
    if evidence.get("agent_exit_code"):
        parts.append(f"solve.sh exit code: {evidence['agent_exit_code']}")
    if evidence.get("verifier_output"):
        parts.append(f"Output of tests/test.sh:\n{evidence['verifier_output']}")
    if evidence.get("error_message"):
        parts.append(f"Harbor error: {evidence['error_message']}")
    return "\n".join(parts)

"""What every check shares: its result, the protocol a check follows, what it is handed, and output helpers.

A check never raises for a bad task: whatever is wrong becomes a failed result whose ``feedback`` a task
proposer (an LLM) can act on without reading our code: it names what failed and quotes the relevant output,
trimmed. A check says which trials it needs (:data:`Trial`); the scheduler (:func:`autoenv.validate.validation.
avalidate_task`) runs each trial once and hands the outcomes to every check by name, so the judging stays pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from harbor.models.task.task import Task
from pydantic import BaseModel, Field

from autoenv.sandbox.backend import Backend
from autoenv.sandbox.backends import get_backend
from autoenv.taskfmt.check import Level, Problem
from autoenv.trials.runner import TrialOutcome

#: A check's name (its module's ``CHECK.name``); reports list checks in the order of ``CHECKS``.
CheckName = str

#: The trials validation can run for a check: the reference solution (``repeats`` times), doing nothing, the
#: cheating agent, the partial solution, and (backends whose image autoenv cannot read) the leak-scan copy.
Trial = Literal["oracle", "nop", "adversary", "partial", "scan"]

#: When a check is judged: the static checks, the build, the first trials (the reference solution and doing
#: nothing reject most bad tasks), the second (the adversary and the partial solution, run only when the first
#: stage found nothing, unless every check is asked for).
STATIC, BUILD, FIRST, SECOND = 0, 1, 2, 3

#: What a verifier prints when it needs the network and has none (DNS, connect, pip, apt, npm).
NETWORK_FAILURE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|Failed to establish a new connection|Could not connect to|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|No matching distribution found|Failed to fetch http|unable to access 'http",
    re.I,
)

TAIL_CHARS = 1500


class CheckResult(BaseModel):
    """One named verdict with the evidence behind it."""

    name: CheckName
    passed: bool | None = Field(description="True/False, or None when the check could not run (see summary)")
    summary: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    feedback: str = Field(default="", description="For a failed check: what to fix, with the relevant output")
    findings: list[Problem] = Field(
        default_factory=list, description="Findings with their level (error, warning, note) and where they are"
    )
    seconds: float = 0.0

    def at(self, level: Level) -> list[Problem]:
        return [f for f in self.findings if f.level == level]

    @property
    def status(self) -> str:
        return {True: "pass", False: "FAIL", None: "skip"}[self.passed]


def skipped(name: CheckName, reason: str) -> CheckResult:
    return CheckResult(name=name, passed=None, summary=f"not run: {reason}")


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


@dataclass
class Outcomes:
    """The trials run for one validation, by name (None: not run)."""

    oracle: list[TrialOutcome] = field(default_factory=list)
    nop: TrialOutcome | None = None
    adversary: TrialOutcome | None = None
    partial: TrialOutcome | None = None
    scan: TrialOutcome | None = None
    ran: set[str] = field(default_factory=set)

    def all(self) -> list[TrialOutcome]:
        return [*self.oracle, *(o for o in (self.nop, self.scan, self.adversary, self.partial) if o is not None)]


@dataclass
class Context:
    """What a check may read about the task being validated (one per validation).

    ``settings`` is the validation's :class:`autoenv.validate.validation.ValidationSettings`; ``results`` the
    verdicts so far (a later check may depend on an earlier one's); ``outcomes`` the trials run so far; ``run``
    runs more trials of the task (a list of ``(agent import path, kwargs)``) for a check that needs a diagnosis;
    ``memo`` holds what several checks compute once (the image scan).
    """

    task_dir: Path
    settings: Any
    task: Task
    run_oracle: bool
    offline: bool
    results: dict[str, CheckResult]
    run: Callable[[list[tuple[str, dict[str, Any]]]], Awaitable[list[TrialOutcome]]]
    force: bool = False
    outcomes: Outcomes = field(default_factory=Outcomes)
    #: the built image (a backend that builds images; set by the build check), the task's secrets and what the
    #: instruction gives away (see :mod:`autoenv.validate.leakage`)
    image: Any = None
    secrets: Any = None
    instruction_findings: list[Any] = field(default_factory=list)
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def threshold(self) -> float:
        return self.settings.threshold

    @property
    def backend(self) -> Backend:
        return get_backend(self.settings.env)

    @property
    def builds_images(self) -> bool:
        """The backend builds the image before any trial (see :class:`autoenv.sandbox.backend.Backend`)."""
        return self.backend.builds_images


class Check:
    """One named verdict on a task. A new check is a module under ``validate/checks/`` with ``CHECK = ...Check()``
    and one entry in ``CHECKS`` (``validate/checks/__init__.py``)."""

    name: ClassVar[CheckName]
    #: when it is judged (STATIC, BUILD, FIRST, SECOND)
    stage: ClassVar[int] = SECOND
    #: judged only with a reference solution ("not run" with --no-oracle or without solution/solve.sh)
    needs_oracle: ClassVar[bool] = False
    #: its "not run" does not make a task invalid (it says why in its summary)
    may_not_run: ClassVar[bool] = False
    #: its failure stops validation even when every check is asked for (nothing after it can run)
    blocks: ClassVar[bool] = False

    def needs(self, ctx: Context) -> frozenset[Trial]:
        """The trials this check judges (oracle and partial are left out without a reference solution)."""
        return frozenset()

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        raise NotImplementedError

    async def early(self, ctx: Context) -> CheckResult | None:
        """What to report when validation stopped before this check's stage (None: "an earlier check failed")."""
        return None

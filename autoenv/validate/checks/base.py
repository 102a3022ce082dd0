"""What every check shares: its result, the protocol a check follows, what it is handed, and output helpers.

A check never raises for a bad task: whatever is wrong becomes a failed result whose ``feedback`` a task
proposer (an LLM) can act on without reading our code: it names what failed and quotes the relevant output,
trimmed. A check says which trials it needs (:data:`Trial`); the scheduler (:func:`autoenv.validate.validation.
avalidate_task`) runs each trial once and hands the outcomes to every check by name, so the judging stays pure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from harbor.models.task.task import Task
from pydantic import BaseModel, Field

from autoenv.sandbox.backend import Backend
from autoenv.sandbox.backends import get_backend
from autoenv.shared.settings import ValidationSettings
from autoenv.taskfmt.check import Level, Problem
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.evidence import (  # noqa: F401 - check modules written against base import them here
    NETWORK_FAILURE,
    TAIL_CHARS,
    describe,
    first_line,
    network_advice,
    network_failure,
    outputs_block,
    phase_seconds,
    read_file,
    tail,
    trial_evidence,
)

#: A check's name (its module's ``CHECK.name``); reports list checks in the order of ``CHECKS``.
CheckName = str

#: The trials validation can run for a check: the reference solution (``repeats`` times), doing nothing, the
#: cheating agent, the partial solution, and (backends whose image autoenv cannot read) the leak-scan copy.
Trial = Literal["oracle", "nop", "adversary", "partial", "scan"]

#: When a check is judged: the static checks, the build, the first trials (the reference solution and doing
#: nothing reject most bad tasks), the second (the adversary and the partial solution, run only when the first
#: stage found nothing, unless every check is asked for).
STATIC, BUILD, FIRST, SECOND = 0, 1, 2, 3


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


#: The agent each kind of trial runs (by Harbor name or import path), with its kwargs.
TRIAL_AGENTS: dict[Trial, str] = {
    "oracle": "autoenv.agents.partial:ProbedOracleAgent",
    "nop": "nop",
    "adversary": "autoenv.agents.adversary:AdversaryAgent",
    "partial": "autoenv.agents.partial:PartialSolutionAgent",
    "scan": "autoenv.agents.scan:ScanAgent",
}


@dataclass
class Context:
    """What a check may read about the task being validated (one per validation).

    ``settings`` is the validation's :class:`autoenv.shared.settings.ValidationSettings`; ``results`` the
    verdicts so far (a later check may depend on an earlier one's); ``outcomes`` the trials run so far; ``run``
    runs more trials of the task (a list of ``(agent import path, kwargs)``) for a check that needs a diagnosis;
    ``memo`` holds what several checks compute once (the image scan).
    """

    task_dir: Path
    settings: ValidationSettings
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
    #: where the oracle and partial agents find the reference solution when it is not the task's own: a copy of
    #: the task with one derived from an agent's passing attempt (see :mod:`autoenv.validate.checks.agent_oracle`)
    solution_dir: Path | None = None

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

    #: the trials it judges, where they do not depend on the task (a check whose trials do overrides ``needs``)
    trials: ClassVar[frozenset[Trial]] = frozenset()

    def needs(self, ctx: Context) -> frozenset[Trial]:
        """The trials this check judges (oracle and partial are left out without a reference solution)."""
        return self.trials

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        raise NotImplementedError

    async def early(self, ctx: Context) -> CheckResult | None:
        """What to report when validation stopped before this check's stage (None: "an earlier check failed")."""
        return None


class OracleRunsCheck(Check):
    """A check that judges the reference solution's runs (``outcomes.oracle``, one per repeat): judged with doing
    nothing, "not run" without a reference solution."""

    stage = FIRST
    needs_oracle = True
    trials = frozenset({"oracle"})

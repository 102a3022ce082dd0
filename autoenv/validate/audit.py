"""A dataset audit: every task of a folder validated, side by side, resumable, summed up.

A user's first job is often auditing tasks they already have (a Terminal-Bench-style dataset, an LLM-written
collection) before training on them. :func:`aaudit` validates ``jobs`` tasks at once (or each as a Ray task on a
cluster), records every verdict in the task's own record file as :func:`avalidate_task` always does, so a killed
audit resumes where it stopped: a task whose exact content already has a verdict under the same settings is not
run again. A task that cannot be validated because it is wrong (a task.toml Harbor rejects, a Dockerfile that
does not build) is an entry of the audit, not the end of it; a sandbox or machine fault, or a bug, stops the audit
(every later verdict would be as wrong).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from autoenv.errors import Fault, explain
from autoenv.shared.settings import ValidationSettings
from autoenv.taskfmt.check import Level
from autoenv.validate.validation import ValidationReport, avalidate_task
from autoenv.validate.verdict import Undetermined, two_valued
from autoenv.vocab import Verdict


class AuditEntry(BaseModel):
    """One task's line in the audit."""

    task: str
    task_name: str
    valid: bool
    verdict: Verdict = Field(description="valid, invalid or undetermined (an entry not validated is invalid)")
    undetermined: list[Undetermined] = Field(default_factory=list, description="why undetermined, and what decides it")
    failed: list[str] = Field(default_factory=list, description="checks that failed, in check order")
    errors: list[str] = Field(default_factory=list, description="each failed check's summary")
    warnings: int = 0
    notes: int = 0
    duration_sec: float = 0.0
    cached: bool = Field(default=False, description="a recorded verdict for this exact content (not run again)")
    not_validated: str | None = Field(default=None, description="why the task could not be validated at all")

    @model_validator(mode="before")
    @classmethod
    def _two_valued(cls, data: Any) -> Any:
        return two_valued(data)

    @classmethod
    def of(cls, report: ValidationReport) -> AuditEntry:
        """The report's line: what the two share as it is, the checks' findings counted."""
        shared = {
            name: getattr(report, name) for name in cls.model_fields.keys() & ValidationReport.model_fields.keys()
        }
        return cls(
            **shared,
            failed=[c.name for c in report.failed],
            errors=[f"{c.name}: {c.summary}" for c in report.failed],
            warnings=len(report.findings(Level.WARNING)),
            notes=len(report.findings(Level.NOTE)),
        )


class AuditReport(BaseModel):
    """The dataset's verdicts and their summary (``autoenv validate DATASET --json``)."""

    dataset: str
    env: str
    started_at: datetime
    duration_sec: float
    entries: list[AuditEntry]

    @property
    def n_valid(self) -> int:
        return sum(e.valid for e in self.entries)

    @property
    def n_undetermined(self) -> int:
        return sum(e.verdict is Verdict.UNDETERMINED for e in self.entries)

    def undetermined_by_reason(self) -> dict[str, int]:
        """How many undetermined tasks each kind of reason holds (no solution, cannot judge here), most first."""
        counts = Counter(
            str(e.undetermined[0].kind) for e in self.entries if e.verdict is Verdict.UNDETERMINED and e.undetermined
        )
        return dict(counts.most_common())

    @property
    def n_not_validated(self) -> int:
        return sum(e.not_validated is not None for e in self.entries)

    def failures_by_check(self) -> dict[str, int]:
        """How many tasks each check failed (a task can fail several), most first."""
        counts = Counter(name for e in self.entries for name in e.failed)
        if self.n_not_validated:
            counts["not validated"] = self.n_not_validated
        return dict(counts.most_common())

    def worst(self, n: int = 10) -> list[AuditEntry]:
        """The tasks with the most failed checks (ties: by name)."""
        bad = [e for e in self.entries if e.verdict is Verdict.INVALID]
        return sorted(bad, key=lambda e: (-len(e.failed), e.task_name))[:n]

    def summary(self) -> dict[str, Any]:
        return {
            "tasks": len(self.entries),
            "valid": self.n_valid,
            "invalid": len(self.entries) - self.n_valid - self.n_undetermined - self.n_not_validated,
            "undetermined": self.n_undetermined,
            "undetermined_by_reason": self.undetermined_by_reason(),
            "not_validated": self.n_not_validated,
            "recorded_before": sum(e.cached for e in self.entries),
            "failures_by_check": self.failures_by_check(),
        }


def _task_fault(task: Path, exc: BaseException) -> AuditEntry | None:
    """An entry for a task that is wrong beyond checking; None when the fault is not the task's."""
    why = explain(exc, task=task)
    if why.kind is not Fault.TASK:
        return None
    return AuditEntry(
        task=str(task), task_name=task.name, valid=False, verdict=Verdict.INVALID, not_validated=why.message
    )


async def aaudit(
    tasks: list[Path],
    settings: ValidationSettings | None = None,
    *,
    dataset: Path | str,
    jobs: int = 2,
    ray_address: str | None = None,
    on_done: Callable[[AuditEntry, ValidationReport | None], None] | None = None,
    **run: Any,
) -> AuditReport:
    """Validate ``tasks`` under ``settings`` (``jobs`` at once, or on Ray at ``ray_address``) and sum the verdicts up.

    ``run`` is how each validation runs (:func:`avalidate_task`'s keyword arguments: force, trials_dir,
    n_concurrent, ...). ``on_done`` hears of each task as it finishes (progress, printing). Raises the first fault
    that is not a task's own (sandbox, machine, backend, bug): the audit stops there, the verdicts so far stay
    recorded.
    """
    settings = settings or ValidationSettings()
    started_at, started = datetime.now(UTC), time.monotonic()
    entries: dict[Path, AuditEntry] = {}
    validate = _ray_validate(ray_address) if ray_address else avalidate_task
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(task: Path) -> None:
        async with gate:
            try:
                report = await validate(task, settings, **run)
            except Exception as exc:  # noqa: BLE001 - sorted below: a task's fault is an entry, the rest stops
                entry = _task_fault(task, exc)
                if entry is None:
                    raise
                report = None
            else:
                entry = AuditEntry.of(report)
        entries[task] = entry
        if on_done is not None:
            on_done(entry, report)

    pending = [asyncio.create_task(one(t)) for t in tasks]
    try:
        await asyncio.gather(*pending)
    finally:
        for p in pending:
            p.cancel()
    return AuditReport(
        dataset=str(dataset),
        env=settings.env,
        started_at=started_at,
        duration_sec=round(time.monotonic() - started, 3),
        entries=[entries[t] for t in tasks],
    )


def _ray_validate(address: str) -> Callable[..., Any]:
    """:func:`avalidate_task` as a Ray task: one validation per worker, its report back as JSON."""
    from autoenv.trials.cluster import ray_init

    ray = ray_init(address)

    @ray.remote(num_cpus=1)
    def remote(task: str, settings: str, run: dict[str, Any]) -> str:
        from autoenv.trials.runner import quiet_harbor_logs
        from autoenv.validate.validation import validate_task

        quiet_harbor_logs()
        return validate_task(task, ValidationSettings.model_validate_json(settings), **run).model_dump_json()

    async def run(task: Path, settings: ValidationSettings, **kwargs: Any) -> ValidationReport:
        ref = remote.remote(str(task), settings.model_dump_json(), kwargs)
        return ValidationReport.model_validate_json(await asyncio.to_thread(ray.get, ref))

    return run


__all__ = ["AuditEntry", "AuditReport", "aaudit"]

"""Validate a task: is it a fair, well-posed training environment?

The order matters for cost: the static structure check and the image build
come first, because nothing else can run without them; then all trials
(oracle x R, nop, adversary, partial solution) run together, bounded by ``n_concurrent``, and
each check judges the outcomes it needs. Every report is recorded next to
the task under its content hash (see :mod:`autoenv.validate.cache`), so
validating an unchanged task again is free.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harbor.models.task.config import NetworkMode
from harbor.models.task.task import Task
from pydantic import BaseModel, Field, model_validator

from autoenv.errors import BackendUnsupported
from autoenv.shared.settings import ValidationSettings
from autoenv.taskfmt.check import Level, Problem
from autoenv.trials import runner
from autoenv.trials.attribution import ErrorKind
from autoenv.validate import cache, checks
from autoenv.validate.checks import CHECK_ORDER, CHECKS, CheckName, CheckResult, Context, skipped
from autoenv.validate.checks.agent_oracle import agent_oracle
from autoenv.validate.checks.base import BUILD, FIRST, SECOND, STATIC, TRIAL_AGENTS, Trial
from autoenv.validate.leakage import scan_instruction, task_secrets
from autoenv.validate.verdict import Undetermined, decide, reasons, two_valued
from autoenv.vocab import Verdict


def autoenv_version() -> str:
    try:
        return version("autoenv")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        return "0"


def record_key(settings: ValidationSettings) -> str:
    """The key a report is recorded under: the settings and the version of the checks' code (a record made by other
    checks is not reused)."""
    s = settings
    agent = f";oracle_agent={s.oracle_agent}x{s.oracle_attempts}" if s.oracle_agent else ""
    return (
        f"env={s.env};repeats={s.repeats};threshold={s.threshold:g};margin={s.timeout_margin:g};"
        f"oracle={int(s.oracle)};strict={int(s.strict)};all={int(s.all_checks)};"
        f"checks={checks.CHECKS_VERSION}{agent}"
    )


def may_not_run(settings: ValidationSettings) -> frozenset[str]:
    """Checks whose "not run" does not make a task invalid under these settings."""
    return checks.MAY_NOT_RUN | (frozenset() if settings.oracle else checks.NEED_ORACLE)


class ValidationReport(BaseModel):
    """On-disk and API form of one validation (``<task>/.autoenv/validation.json``)."""

    task: str
    task_name: str
    content_hash: str
    settings: ValidationSettings
    valid: bool = Field(description="the verdict is valid (kept for readers of the two-valued reports)")
    verdict: Verdict = Field(description="valid, invalid, or undetermined (see undetermined for why)")
    undetermined: list[Undetermined] = Field(
        default_factory=list, description="why the verdict is undetermined, and what would decide it"
    )
    checks: list[CheckResult]
    started_at: datetime
    duration_sec: float
    autoenv_version: str = Field(default_factory=autoenv_version)
    cached: bool = Field(default=False, description="True when this report came from the record, not a fresh run")

    @model_validator(mode="before")
    @classmethod
    def _two_valued(cls, data: Any) -> Any:
        return two_valued(data)

    def check(self, name: CheckName) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    def trainable(self, accept_undetermined: bool = False) -> bool:
        """Whether a task with this verdict may be trained on (undetermined ones only when asked for)."""
        return self.verdict is Verdict.VALID or (accept_undetermined and self.verdict is Verdict.UNDETERMINED)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.passed is False]

    def findings(self, level: Level) -> list[Problem]:
        """Every finding of one level, over all checks."""
        return [f for c in self.checks for f in c.at(level)]

    def feedback(self) -> str:
        """Everything a proposer needs to fix the task: errors (failed checks) first, then warnings and notes."""
        warnings, notes = self.findings(Level.WARNING), self.findings(Level.NOTE)
        later = []
        if warnings:
            later.append(
                "Warnings (worth fixing; they do not change what the task does"
                + ("; --strict counts them as errors" if self.settings.strict else "")
                + "):\n"
                + "\n".join(f"- {w}" for w in warnings)
            )
        if notes:
            later.append(
                "Notes (limits of how the task is run, not flaws of the task):\n" + "\n".join(f"- {n}" for n in notes)
            )
        not_run = [c for c in self.checks if c.passed is None]
        if self.valid or (self.verdict is Verdict.UNDETERMINED and not self.failed):
            head = f"Task {self.task_name} is valid: no errors."
            if not self.valid:
                head = f"Task {self.task_name} is undetermined: no errors found, but it cannot be called valid.\n" + (
                    "\n".join(f"- {u}" for u in self.undetermined)
                )
            skipped_lines = [f"- {c.name}: {c.summary}" for c in not_run]
            if skipped_lines:
                later.append("Not checked:\n" + "\n".join(skipped_lines))
            return "\n\n".join([head, *later])
        sections = [f"[{c.name}] error: {c.feedback or c.summary}" for c in self.failed]
        if self.undetermined:
            why = (
                "counted as invalid under --strict"
                if self.verdict is Verdict.INVALID
                else "the failures below may be this machine's, not the task's"
            )
            sections.insert(0, f"Undetermined ({why}):\n" + "\n".join(f"- {u}" for u in self.undetermined))
        blocked = [c.name for c in not_run if c.name not in may_not_run(self.settings)]
        if blocked:
            sections.append(f"Not checked yet (blocked by the failures above): {', '.join(blocked)}.")
        state = "undetermined here" if self.verdict is Verdict.UNDETERMINED else "not valid"
        return f"Task {self.task_name} is {state}.\n\n" + "\n\n".join(sections + later)


def default_trials_dir() -> Path:
    return Path("runs") / "validate"


def _finish(
    task_dir: Path,
    name: str,
    content_hash: str,
    settings: ValidationSettings,
    results: dict[str, CheckResult],
    started_at: datetime,
    started: float,
    *,
    record: bool,
) -> ValidationReport:
    for check in ("leakage", "inputs"):  # behavioural checks whose warnings count under --strict
        if settings.strict and check in results:
            results[check] = checks.warnings_count(results[check])
    ordered = [results.get(n) or skipped(n, "an earlier check failed") for n in CHECK_ORDER]
    lenient = decide(ordered, may_not_run(settings))
    verdict = Verdict.INVALID if settings.strict and lenient is Verdict.UNDETERMINED else lenient
    report = ValidationReport(
        task=str(task_dir),
        task_name=name,
        content_hash=content_hash,
        settings=settings,
        valid=verdict is Verdict.VALID,
        verdict=verdict,
        # (kept under --strict too, which counts them as invalid: the reader still learns why)
        undetermined=reasons(ordered) if lenient is Verdict.UNDETERMINED else [],
        checks=ordered,
        started_at=started_at,
        duration_sec=round(time.monotonic() - started, 3),
    )
    if record:
        cache.save_record(task_dir, "validation", record_key(settings), report)
    return report


def cached_validation(task_dir: Path | str, settings: ValidationSettings | None = None) -> ValidationReport | None:
    """The recorded report for this exact task content (and settings, if given), or None."""
    return cache.cached_report(
        task_dir, "validation", None if settings is None else record_key(settings), ValidationReport
    )


def _trials_at_once() -> int:
    """Trials of one validation that run at once: one more than the cores, at most 5 (the most a stage has). A
    trial waits on process starts and pipes part of its time; on 2 cores, 3 at once validated the bundled tasks
    ~10% faster than 2 (every check, side by side), and 5 no faster than 3. ``AUTOENV_TRIALS_AT_ONCE`` sets it
    where the cores are shared (several validations or test workers at once)."""
    raw = os.environ.get("AUTOENV_TRIALS_AT_ONCE", "").strip()
    if not raw:
        return min(5, (os.cpu_count() or 1) + 1)
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"AUTOENV_TRIALS_AT_ONCE={raw!r}: expected a whole number of trials, 1 or more")
    return int(raw)


TRIALS_AT_ONCE = _trials_at_once()


async def avalidate_task(
    path: Path | str,
    settings: ValidationSettings | None = None,
    *,
    force: bool = False,
    record: bool = True,
    trials_dir: Path | str | None = None,
    n_concurrent: int = TRIALS_AT_ONCE,
) -> ValidationReport:
    """Run the checks on one task under ``settings`` (default: :class:`ValidationSettings`'s defaults), or return
    the recorded verdict for the same content and settings.

    The checks run cheapest first and stop at the first stage that finds an error (structure; the build; the
    reference solution, determinism and doing nothing; then the adversary, the partial solution and the leak scan
    for expected values): a rejected task costs what its rejection costs. ``settings.all_checks`` runs every check
    anyway (a full report, e.g. to compare with a reviewer's labels). ``settings.oracle=False`` validates without
    the reference solution (datasets that ship none): the checks that need it are reported as not run and do not
    make the task invalid; the task is at best "undetermined". ``settings.oracle_agent`` (a solver spec): without a
    reference solution, ``oracle_attempts`` attempts by that agent; one passing shows the task solvable.
    ``settings.strict``: warnings and undetermined verdicts count as invalid. The keyword arguments say how this
    one run goes, never what it decides: ``force`` ignores a recorded verdict, ``record`` keeps this one,
    ``trials_dir`` holds the trials, ``n_concurrent`` of which run at once.
    """
    task_dir = Path(path).resolve()
    settings = settings or ValidationSettings()
    env = settings.env
    started_at, started = datetime.now(UTC), time.monotonic()

    def finish(name: str, content_hash: str, results: dict[str, CheckResult], keep: bool = record) -> ValidationReport:
        return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=keep)

    if not task_dir.is_dir():
        return finish(task_dir.name, "", {"structure": checks.check_structure(task_dir, settings)}, False)
    content_hash = cache.task_content_hash(task_dir)
    if not force:
        hit = cache.cached_report(task_dir, "validation", record_key(settings), ValidationReport, content_hash)
        if hit is not None:
            return hit
        if settings.strict:
            # --strict changes only how the static findings count: judge the recorded trials again
            lenient = settings.model_copy(update={"strict": False})
            base = cache.load_record(task_dir, "validation", record_key(lenient), content_hash, ValidationReport)
            if base is not None:
                results = {c.name: c for c in base.checks}
                results["structure"] = checks.check_structure(task_dir, settings)
                return finish(base.task_name, content_hash, results)

    # the structure check first: a failing lint does not hide the behavioural checks, which run on every task
    # that Harbor can load and that has a verifier script to run
    results: dict[str, CheckResult] = {}
    results["structure"] = checks.check_structure(task_dir, settings)
    try:
        task = Task(task_dir)
    except Exception:  # noqa: BLE001 - the structure check has said why
        return finish(task_dir.name, content_hash, results)
    if not results["structure"].passed and not settings.all_checks:
        return finish(task.name, content_hash, results)
    if not task.paths.test_path.is_file() or task.config.steps:
        has_tests = task.paths.test_path.is_file()
        why = "multi-step tasks are checked statically only" if has_tests else "no verifier script to run"
        results |= {n: skipped(n, why) for n in CHECK_ORDER[1:]}
        return finish(task_dir.name, content_hash, results)
    trials_root = Path(trials_dir or default_trials_dir()).resolve() / f"{task_dir.name}-{content_hash[:8]}"

    async def run(jobs: list[tuple[str, dict[str, Any]]]) -> list[runner.TrialOutcome]:
        done = await runner.arun_many(
            [(task_dir, agent, kwargs) for agent, kwargs in jobs],
            n_concurrent=n_concurrent,
            env=env,
            trials_dir=trials_root,
        )
        unsupported = next((o for o in done if o.error == ErrorKind.BACKEND_UNSUPPORTED), None)
        if unsupported is not None:  # not a verdict on the task: nothing can run it here
            raise BackendUnsupported(unsupported.error_message or f"the {env} backend cannot run {task_dir.name}")
        return done

    secrets = task_secrets(task_dir)
    ctx = Context(
        task_dir=task_dir,
        settings=settings,
        task=task,
        run_oracle=settings.oracle and task.paths.solve_path.is_file(),
        offline=task.config.environment.network_mode == NetworkMode.NO_NETWORK,
        results=results,
        run=run,
        force=force,
        secrets=secrets,
        instruction_findings=scan_instruction(task_dir, secrets),
    )
    await _run_checks(ctx)
    return finish(task.name, content_hash, results)


NO_ORACLE = "validated with --no-oracle"
NO_SOLUTION = "no reference solution (solution/solve.sh; see structure)"


async def _run_checks(ctx: Context) -> None:
    """Each stage runs the trials its checks need (every later stage's too with ``all_checks``), then judges."""
    results, outcomes = ctx.results, ctx.outcomes
    for stage in (STATIC, BUILD, FIRST, SECOND):
        due = [c for c in CHECKS if c.stage == stage]
        if stage == FIRST and not ctx.run_oracle:
            if ctx.settings.oracle_agent:  # an agent's passing attempt shows it solvable, and may become the reference
                agent, k = ctx.settings.oracle_agent, ctx.settings.oracle_attempts
                results["oracle"] = await agent_oracle(ctx, agent, k)
            if not ctx.run_oracle:
                why = NO_ORACLE if not ctx.settings.oracle else NO_SOLUTION
                results |= {
                    c.name: skipped(c.name, f"oracle not checked: {why}")
                    for c in CHECKS
                    if c.needs_oracle and c.name not in results
                }
        # with all_checks, the trials of every later stage run at once with the first stage that runs trials
        at_once = ctx.settings.all_checks and stage >= FIRST
        later = [c for c in CHECKS if c.stage == stage or (at_once and c.stage > stage)]
        await _run_trials(ctx, frozenset().union(*(c.needs(ctx) for c in later if c.name not in results)))
        for check in due:
            if check.name not in results:
                results[check.name] = await check.judge(ctx, outcomes)
        blocked = any(results[c.name].passed is False and c.blocks for c in due)
        if blocked or (not ctx.settings.all_checks and any(r.passed is False for r in results.values())):
            for check in CHECKS:
                if check.stage > stage and check.name not in results:
                    if (early := await check.early(ctx)) is not None:
                        results[check.name] = early
            return


async def _run_trials(ctx: Context, needs: frozenset[Trial]) -> None:
    """Run the trials in ``needs`` not run yet and file their outcomes by name."""
    outcomes = ctx.outcomes
    wanted = [
        t
        for t in ("oracle", "nop", "scan", "adversary", "partial")
        if t in needs
        and t not in outcomes.ran
        and (ctx.run_oracle or t not in ("oracle", "partial"))
        and (not ctx.builds_images or t != "scan")
    ]
    jobs: list[tuple[str, dict[str, Any]]] = []
    for t in wanted:
        kwargs = {"task_dir": str(ctx.solution_dir or ctx.task_dir)} if t in ("oracle", "partial") else {}
        jobs += [(TRIAL_AGENTS[t], kwargs)] * (ctx.settings.repeats if t == "oracle" else 1)
    done = iter(await ctx.run(jobs) if jobs else [])
    for t in wanted:
        outcomes.ran.add(t)
        if t == "oracle":
            outcomes.oracle = [next(done) for _ in range(ctx.settings.repeats)]
        else:
            setattr(outcomes, t, next(done))


def validate_task(path: Path | str, settings: ValidationSettings | None = None, **run: Any) -> ValidationReport:
    """Blocking wrapper around :func:`avalidate_task` for scripts (``run``: its keyword arguments)."""
    return asyncio.run(avalidate_task(path, settings, **run))

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
import time
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harbor.models.task.config import VerifierEnvironmentMode
from harbor.models.task.task import Task
from pydantic import BaseModel, Field

from autoenv.trials import runner
from autoenv.validate import cache, checks
from autoenv.validate.checks import CHECK_ORDER, CheckName, CheckResult, skipped
from autoenv.validate.leakage import scan_extracted, scan_instruction, scan_tree, task_secrets

ORACLE = "oracle"
NOP = "nop"
ADVERSARY = "autoenv.agents.adversary:AdversaryAgent"
PARTIAL = "autoenv.agents.partial:PartialSolutionAgent"
SCANNER = "autoenv.validate.leakage:ScanAgent"


def autoenv_version() -> str:
    try:
        return version("autoenv")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        return "0"


class ValidationSettings(BaseModel):
    """Everything besides the task's content that can change a verdict (part of the cache key)."""

    env: str = "local"
    repeats: int = Field(default=2, ge=1, description="oracle runs; all must pass with the same verdict")
    threshold: float = Field(default=1.0, description="reward that counts as a pass (below 1 for graded rewards)")
    timeout_margin: float = Field(default=0.5, gt=0, le=1, description="share of a time limit the oracle/verifier may use")

    def key(self) -> str:
        return (f"env={self.env};repeats={self.repeats};threshold={self.threshold:g};margin={self.timeout_margin:g};"
                f"checks={checks.CHECKS_VERSION}")


class ValidationReport(BaseModel):
    """On-disk and API form of one validation (``<task>/.autoenv/validation.json``)."""

    task: str
    task_name: str
    content_hash: str
    settings: ValidationSettings
    valid: bool
    checks: list[CheckResult]
    started_at: datetime
    duration_sec: float
    autoenv_version: str = Field(default_factory=autoenv_version)
    cached: bool = Field(default=False, description="True when this report came from the record, not a fresh run")

    def check(self, name: CheckName) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.passed is False]

    def feedback(self) -> str:
        """Everything a proposer needs to fix the task, failed checks first, one section each."""
        if self.valid:
            return f"Task {self.task_name} is valid: all checks passed."
        sections = [f"[{c.name}] {c.feedback or c.summary}" for c in self.failed]
        not_run = [c.name for c in self.checks if c.passed is None]
        if not_run:
            sections.append(f"Not checked yet (blocked by the failures above): {', '.join(not_run)}.")
        return f"Task {self.task_name} is not valid.\n\n" + "\n\n".join(sections)


def default_trials_dir() -> Path:
    return Path("runs") / "validate"


def _finish(task_dir: Path, name: str, content_hash: str, settings: ValidationSettings, results: dict[str, CheckResult],
            started_at: datetime, started: float, *, record: bool) -> ValidationReport:
    ordered = [results.get(n) or skipped(n, "an earlier check failed") for n in CHECK_ORDER]
    report = ValidationReport(
        task=str(task_dir), task_name=name, content_hash=content_hash, settings=settings,
        valid=all(c.passed is True or (c.passed is None and c.name in checks.MAY_NOT_RUN) for c in ordered), checks=ordered,
        started_at=started_at, duration_sec=round(time.monotonic() - started, 3),
    )
    if record:
        cache.save_record(task_dir, "validation", settings.key(), report)
    return report


def cached_validation(task_dir: Path | str, settings: ValidationSettings | None = None) -> ValidationReport | None:
    """The recorded report for this exact task content (and settings, if given), or None."""
    return cache.cached_report(task_dir, "validation", None if settings is None else settings.key(), ValidationReport)


async def avalidate_task(
    path: Path | str,
    *,
    env: str = "local",
    repeats: int = 2,
    threshold: float = 1.0,
    timeout_margin: float = 0.5,
    force: bool = False,
    record: bool = True,
    trials_dir: Path | str | None = None,
    n_concurrent: int = 2,
) -> ValidationReport:
    """Run every check on one task (or return the recorded verdict for the same content)."""
    task_dir = Path(path).resolve()
    settings = ValidationSettings(env=env, repeats=repeats, threshold=threshold, timeout_margin=timeout_margin)
    started_at, started = datetime.now(timezone.utc), time.monotonic()
    results: dict[str, CheckResult] = {}

    if not task_dir.is_dir():
        results["structure"] = checks.check_structure(task_dir, env=env)
        return _finish(task_dir, task_dir.name, "", settings, results, started_at, started, record=False)
    content_hash = cache.task_content_hash(task_dir)
    if not force:
        hit = cache.load_record(task_dir, "validation", settings.key(), content_hash, ValidationReport)
        if hit is not None:
            hit.cached = True
            return hit

    # 1. structure: nothing else is meaningful on a task Harbor cannot load
    results["structure"] = checks.check_structure(task_dir, env=env)
    if not results["structure"].passed:
        return _finish(task_dir, task_dir.name, content_hash, settings, results, started_at, started, record=record)
    task = Task(task_dir)
    name = task.name
    secrets = task_secrets(task_dir)
    instruction_findings = scan_instruction(task_dir, secrets)

    # 2. build (local: directly, so a broken line is reported without a trial)
    image_findings = None
    image_note = ""
    if env == "local":
        results["build"], image = await checks.check_build_local(task_dir, force=force)
        if image is None:
            results["leakage"] = checks.check_leakage(None, instruction_findings, image_note="the environment did not build")
            return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)
        image_findings = await asyncio.to_thread(scan_tree, image.rootfs, secrets)

    # 3-7. all trials at once
    trials_root = Path(trials_dir or default_trials_dir()).resolve() / f"{task_dir.name}-{content_hash[:8]}"
    jobs: list[tuple[Path, str, dict[str, Any]]] = [(task_dir, ORACLE, {}) for _ in range(repeats)]
    jobs += [(task_dir, NOP, {}), (task_dir, ADVERSARY, {}), (task_dir, PARTIAL, {"task_dir": str(task_dir)})]
    if env != "local":
        jobs.append((task_dir, SCANNER, {}))
    outcomes = await runner.arun_many(jobs, n_concurrent=n_concurrent, env=env, trials_dir=trials_root)
    oracle, nop, adversary, partial = outcomes[:repeats], outcomes[repeats], outcomes[repeats + 1], outcomes[repeats + 2]

    if env != "local":
        results["build"] = checks.check_build_from_trials(outcomes, task.config.environment.build_timeout_sec)
        if not results["build"].passed:
            results["leakage"] = checks.check_leakage(None, instruction_findings, image_note="the environment did not build")
            return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)
        scan = outcomes[repeats + 3]
        try:
            image_findings = scan_extracted(Path(scan.trial_dir), secrets)
        except (FileNotFoundError, OSError) as exc:
            image_note = f"could not copy the environment out for scanning: {exc}; {scan.error_message or ''}".strip()

    results["oracle"] = checks.check_oracle(oracle, threshold=threshold)
    results["deterministic"] = checks.check_deterministic(oracle)
    results["nop"] = checks.check_nop(nop)
    results["leakage"] = checks.check_leakage(image_findings, instruction_findings, image_note=image_note)
    diagnosis = None
    if nop.reward is not None and nop.reward >= threshold:
        # a cheater "wins" because doing nothing wins; the nop check already says so
        results["tamper"] = skipped("tamper", "doing nothing already passes (see nop), so cheating proves nothing more")
    elif adversary.reward is not None and adversary.reward >= threshold:
        # say which family of cheats did it: the fix is different for each
        families = list(checks.CHEAT_ADVICE)
        runs = await runner.arun_many([(task_dir, ADVERSARY, {"cheats": f}) for f in families], n_concurrent=n_concurrent, env=env, trials_dir=trials_root)
        diagnosis = dict(zip(families, runs))
    if "tamper" not in results:
        results["tamper"] = checks.check_tamper(adversary, threshold=threshold, diagnosis=diagnosis)
    verifier_cfg = task.config.verifier
    separate = verifier_cfg.environment_mode == VerifierEnvironmentMode.SEPARATE or (
        verifier_cfg.environment_mode is None and verifier_cfg.environment is not None)
    if not separate and results["tamper"].passed:
        # the adversary lost, but a shared-mode verifier is only as safe as the cheats it tried
        results["tamper"].summary += (" (shared-mode verifier: the reward is only as safe as a verifier in the agent's "
                                      "sandbox can be; environment_mode = \"separate\" grades in a fresh one)")
        results["tamper"].evidence["verifier_mode"] = "shared"
    if nop.reward is not None and nop.reward >= threshold:
        results["partial"] = skipped("partial", "doing nothing already passes (see nop), so a partial solution proves nothing more")
    elif not results["oracle"].passed:
        results["partial"] = skipped("partial", "the reference solution does not pass (see oracle), so there is nothing to take away from")
    else:
        results["partial"] = checks.check_partial(partial, threshold=threshold)
    results["timeouts"] = checks.check_timeouts(
        oracle,
        agent_timeout_sec=task.config.agent.timeout_sec,
        verifier_timeout_sec=task.config.verifier.timeout_sec,
        margin=timeout_margin,
    )
    return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)


def validate_task(path: Path | str, **kwargs: Any) -> ValidationReport:
    """Blocking wrapper around :func:`avalidate_task` for scripts and the CLI."""
    return asyncio.run(avalidate_task(path, **kwargs))

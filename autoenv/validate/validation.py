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

from harbor.models.task.config import NetworkMode, VerifierEnvironmentMode
from harbor.models.task.task import Task
from pydantic import BaseModel, Field

from autoenv.agents.adversary import CHEAT_KINDS, SHARED_MODE_FAMILIES
from autoenv.agents.partial import solution_outputs
from autoenv.errors import BackendUnsupported
from autoenv.sandbox.local.image import base_rootfs
from autoenv.taskfmt.check import Level, Problem
from autoenv.trials import runner
from autoenv.validate import cache, checks
from autoenv.validate.checks import CHECK_ORDER, CheckName, CheckResult, skipped
from autoenv.validate.leakage import (
    EXTRACTED_SKIP,
    SKIP_DIRS,
    extracted_root,
    scan_expected_values,
    scan_extracted,
    scan_instruction,
    scan_outputs_in_instruction,
    scan_tree,
    task_secrets,
)

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
    timeout_margin: float = Field(
        default=0.5, gt=0, le=1, description="share of a time limit the oracle/verifier may use"
    )
    oracle: bool = Field(
        default=True, description="run the reference solution; False validates a task (dataset) without one"
    )
    strict: bool = Field(
        default=False, description="warnings (style, unpinned versions, unknown fields) make a task invalid too"
    )
    all_checks: bool = Field(
        default=False,
        description="run every check even after one failed (default: stop once the cheap checks find an error)",
    )

    def key(self) -> str:
        return (
            f"env={self.env};repeats={self.repeats};threshold={self.threshold:g};margin={self.timeout_margin:g};"
            f"oracle={int(self.oracle)};strict={int(self.strict)};all={int(self.all_checks)};"
            f"checks={checks.CHECKS_VERSION}"
        )

    def may_not_run(self) -> frozenset[str]:
        """Checks whose "not run" does not make a task invalid under these settings."""
        return checks.MAY_NOT_RUN | (frozenset() if self.oracle else checks.NEED_ORACLE)


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
        if self.valid:
            head = f"Task {self.task_name} is valid: no errors."
            skipped_lines = [f"- {c.name}: {c.summary}" for c in not_run]
            if skipped_lines:
                later.append("Not checked:\n" + "\n".join(skipped_lines))
            return "\n\n".join([head, *later])
        sections = [f"[{c.name}] error: {c.feedback or c.summary}" for c in self.failed]
        blocked = [c.name for c in not_run if c.name not in self.settings.may_not_run()]
        if blocked:
            sections.append(f"Not checked yet (blocked by the failures above): {', '.join(blocked)}.")
        return f"Task {self.task_name} is not valid.\n\n" + "\n\n".join(sections + later)


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
    if settings.strict and "leakage" in results:
        results["leakage"] = checks.warnings_count(results["leakage"])
    ordered = [results.get(n) or skipped(n, "an earlier check failed") for n in CHECK_ORDER]
    report = ValidationReport(
        task=str(task_dir),
        task_name=name,
        content_hash=content_hash,
        settings=settings,
        valid=all(c.passed is True or (c.passed is None and c.name in settings.may_not_run()) for c in ordered),
        checks=ordered,
        started_at=started_at,
        duration_sec=round(time.monotonic() - started, 3),
    )
    if record:
        cache.save_record(task_dir, "validation", settings.key(), report)
    return report


def cached_validation(task_dir: Path | str, settings: ValidationSettings | None = None) -> ValidationReport | None:
    """The recorded report for this exact task content (and settings, if given), or None."""
    return cache.cached_report(task_dir, "validation", None if settings is None else settings.key(), ValidationReport)


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
    *,
    env: str = "local",
    repeats: int = 2,
    threshold: float = 1.0,
    timeout_margin: float = 0.5,
    force: bool = False,
    record: bool = True,
    trials_dir: Path | str | None = None,
    n_concurrent: int = TRIALS_AT_ONCE,
    oracle: bool = True,
    strict: bool = False,
    all_checks: bool = False,
) -> ValidationReport:
    """Run the checks on one task (or return the recorded verdict for the same content).

    The checks run cheapest first and stop at the first stage that finds an error (structure; the build; the
    reference solution, determinism and doing nothing; then the adversary, the partial solution and the leak scan
    for expected values): a rejected task costs what its rejection costs. ``all_checks`` runs every check anyway
    (a full report, e.g. to compare with a reviewer's labels). ``oracle=False`` validates without the reference
    solution (datasets that ship none): the checks that need it are reported as not run and do not make the task
    invalid. ``strict``: warnings count.
    """
    task_dir = Path(path).resolve()
    settings = ValidationSettings(
        env=env,
        repeats=repeats,
        threshold=threshold,
        timeout_margin=timeout_margin,
        oracle=oracle,
        strict=strict,
        all_checks=all_checks,
    )
    started_at, started = datetime.now(UTC), time.monotonic()
    results: dict[str, CheckResult] = {}

    if not task_dir.is_dir():
        results["structure"] = checks.check_structure(task_dir, env=env, oracle=oracle, strict=strict)
        return _finish(task_dir, task_dir.name, "", settings, results, started_at, started, record=False)
    content_hash = cache.task_content_hash(task_dir)
    if not force:
        hit = cache.cached_report(task_dir, "validation", settings.key(), ValidationReport, content_hash)
        if hit is not None:
            return hit
        if strict:
            # --strict changes only how the static findings count: judge the recorded trials again
            lenient = settings.model_copy(update={"strict": False})
            base = cache.load_record(task_dir, "validation", lenient.key(), content_hash, ValidationReport)
            if base is not None:
                results = {c.name: c for c in base.checks}
                results["structure"] = checks.check_structure(task_dir, env=env, oracle=oracle, strict=True)
                return _finish(
                    task_dir, base.task_name, content_hash, settings, results, started_at, started, record=record
                )

    # 1. structure. A failing lint does not hide the behavioural checks: they run on every task that
    # Harbor can load and that has a verifier script to run.
    results["structure"] = checks.check_structure(task_dir, env=env, oracle=oracle, strict=strict)
    try:
        task = Task(task_dir)
    except Exception:  # noqa: BLE001 - the structure check has said why
        return _finish(task_dir, task_dir.name, content_hash, settings, results, started_at, started, record=record)
    if not results["structure"].passed and not all_checks:
        return _finish(task_dir, task.name, content_hash, settings, results, started_at, started, record=record)
    if not task.paths.test_path.is_file() or task.config.steps:
        why = (
            "no verifier script to run"
            if not task.paths.test_path.is_file()
            else "multi-step tasks are checked statically only"
        )
        for n in CHECK_ORDER[1:]:
            results[n] = skipped(n, why)
        return _finish(task_dir, task_dir.name, content_hash, settings, results, started_at, started, record=record)
    name = task.name
    has_solution = task.paths.solve_path.is_file()
    run_oracle = oracle and has_solution
    offline = task.config.environment.network_mode == NetworkMode.NO_NETWORK
    secrets = task_secrets(task_dir)
    instruction_findings = scan_instruction(task_dir, secrets)

    # 2. build (local: directly, so a broken line is reported without a trial)
    image_findings = None
    image_note = ""
    image = None
    if env == "local":
        results["build"], image = await checks.check_build_local(task_dir, force=force)
        if image is None:
            results["leakage"] = checks.check_leakage(
                None, instruction_findings, image_note="the environment did not build", task_dir=task_dir
            )
            return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)
        scan_started = time.monotonic()
        image_findings = await asyncio.to_thread(scan_tree, image.rootfs, secrets)
        scan_sec = time.monotonic() - scan_started
    else:
        scan_sec = 0.0

    # 3-7. the trials, in two stages: the reference solution (x repeats) and doing nothing reject most bad tasks;
    # the adversary and the partial solution run only when those pass (all of them together with all_checks)
    trials_root = Path(trials_dir or default_trials_dir()).resolve() / f"{task_dir.name}-{content_hash[:8]}"
    n_oracle = repeats if run_oracle else 0
    first: list[tuple[Path, str, dict[str, Any]]] = [(task_dir, ORACLE, {}) for _ in range(n_oracle)]
    first.append((task_dir, NOP, {}))
    if env != "local":
        first.append((task_dir, SCANNER, {}))
    second: list[tuple[Path, str, dict[str, Any]]] = [(task_dir, ADVERSARY, {})]
    if run_oracle:
        second.append((task_dir, PARTIAL, {"task_dir": str(task_dir)}))

    async def trials(jobs: list[tuple[Path, str, dict[str, Any]]]) -> list[runner.TrialOutcome]:
        done = await runner.arun_many(jobs, n_concurrent=n_concurrent, env=env, trials_dir=trials_root)
        unsupported = next((o for o in done if o.error == "backend_unsupported"), None)
        if unsupported is not None:  # not a verdict on the task: nothing can run it here
            raise BackendUnsupported(unsupported.error_message or f"the {env} backend cannot run {task_dir.name}")
        return done

    outcomes = await trials(first + second if all_checks else first)
    oracle_runs, nop = outcomes[:n_oracle], outcomes[n_oracle]

    if env != "local":
        scan = outcomes[n_oracle + 1]
        results["build"] = checks.check_build_from_trials(outcomes, task.config.environment.build_timeout_sec)
        if not results["build"].passed:
            results["leakage"] = checks.check_leakage(
                None, instruction_findings, image_note="the environment did not build", task_dir=task_dir
            )
            return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)
        try:
            image_findings = scan_extracted(Path(scan.trial_dir), secrets)
        except (FileNotFoundError, OSError) as exc:
            image_note = f"could not copy the environment out for scanning: {exc}; {scan.error_message or ''}".strip()

    if run_oracle:
        results["oracle"] = checks.check_oracle(oracle_runs, threshold=threshold, offline=offline)
        results["oracle"].seconds = round(sum(o.duration_sec or 0.0 for o in oracle_runs), 3)
        results["deterministic"] = checks.check_deterministic(oracle_runs)
        results["timeouts"] = checks.check_timeouts(
            oracle_runs,
            agent_timeout_sec=task.config.agent.timeout_sec,
            verifier_timeout_sec=task.config.verifier.timeout_sec,
            margin=timeout_margin,
        )
    else:
        why = "validated with --no-oracle" if not oracle else "no reference solution (solution/solve.sh; see structure)"
        for n in checks.NEED_ORACLE:
            results[n] = skipped(n, f"oracle not checked: {why}")
    results["nop"] = checks.check_nop(nop, offline=offline)
    results["nop"].seconds = round(nop.duration_sec or 0.0, 3)
    if not all_checks and any(r.passed is False for r in results.values()):
        # stop here: the adversary and the partial solution cannot make a rejected task valid. What the
        # image's static scan found is reported (it is already paid for); the rest is "not run"
        static = checks.check_leakage(image_findings, instruction_findings, image_note=image_note, task_dir=task_dir)
        if static.passed is False:
            results["leakage"] = static
        return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)
    if not all_checks:
        outcomes += await trials(second)
    adversary = outcomes[len(first)]
    partial = outcomes[len(first) + 1] if run_oracle else None
    outputs = solution_outputs(partial.trial_dir) if partial is not None and partial.trial_dir else {}
    if outputs:
        instruction_findings += scan_outputs_in_instruction(task_dir, outputs, secrets)
    # the expected values (the tests' literals, what the solution wrote) in any file the agent can read
    base = None
    if image is not None:
        readable, skip = image.rootfs, SKIP_DIRS
        dockerfile = task_dir / "environment" / "Dockerfile"
        if dockerfile.is_file():
            base = await asyncio.to_thread(base_rootfs, dockerfile.read_text(errors="replace"))
    else:
        # the scanner's copy of the environment (the first stage's trial after the oracle runs and nop)
        readable, skip = extracted_root(Path(outcomes[n_oracle + 1].trial_dir or ".")), EXTRACTED_SKIP
    scan_started = time.monotonic()
    if image_findings is not None and readable.is_dir():
        image_findings += await asyncio.to_thread(
            scan_expected_values, readable, task_dir, secrets, outputs, skip=skip, base=base
        )
    results["leakage"] = checks.check_leakage(
        image_findings, instruction_findings, image_note=image_note, task_dir=task_dir
    )
    results["leakage"].seconds = round(scan_sec + time.monotonic() - scan_started, 3)
    verifier_cfg = task.config.verifier
    separate = verifier_cfg.environment_mode == VerifierEnvironmentMode.SEPARATE or (
        verifier_cfg.environment_mode is None and verifier_cfg.environment is not None
    )
    diagnosis = None
    shared_only: list[str] | None = None
    if nop.reward is not None and nop.reward >= threshold:
        # a cheater "wins" because doing nothing wins; the nop check already says so
        results["tamper"] = skipped("tamper", "doing nothing already passes (see nop), so cheating proves nothing more")
    elif adversary.reward is not None and adversary.reward >= threshold:
        # say which family of cheats did it: the fix is different for each (only families that applied a
        # cheat are tried: one that did nothing cannot win alone)
        applied = {CHEAT_KINDS.get(c["kind"]) for c in checks.adversary_cheats(adversary)}
        families = [f for f in checks.CHEAT_ADVICE if f in applied]
        if not separate:
            # a shared-mode verifier falls to the harness families anyway: what matters is whether the
            # cheats aimed at this task's tests win without them (one trial), and only then which one
            families = [f for f in families if f not in SHARED_MODE_FAMILIES]
            aimed = (
                (
                    await runner.arun_many(
                        [(task_dir, ADVERSARY, {"cheats": ",".join(families)})],
                        n_concurrent=n_concurrent,
                        env=env,
                        trials_dir=trials_root,
                    )
                )[0]
                if families
                else None
            )
            if aimed is None or aimed.reward is None or aimed.reward < threshold:
                shared_only = [f for f in checks.CHEAT_ADVICE if f in applied and f in SHARED_MODE_FAMILIES]
                families = []
            elif len(families) == 1:
                diagnosis = {families[0]: aimed}
                families = []
        if families:
            runs = await runner.arun_many(
                [(task_dir, ADVERSARY, {"cheats": f}) for f in families],
                n_concurrent=n_concurrent,
                env=env,
                trials_dir=trials_root,
            )
            diagnosis = dict(zip(families, runs))
    if "tamper" not in results:
        results["tamper"] = checks.check_tamper(
            adversary,
            threshold=threshold,
            diagnosis=diagnosis,
            shared_only=shared_only,
            task_toml=str(task_dir / "task.toml"),
        )
    diagnosed = [o for o in (diagnosis or {}).values() if o is not None]
    results["tamper"].seconds = round(sum(o.duration_sec or 0.0 for o in [adversary, *diagnosed]), 3)
    if not separate and results["tamper"].passed:
        # the structure check's shared-verifier note says what that means for the reward
        results["tamper"].evidence["verifier_mode"] = "shared"
    if partial is None:
        pass
    elif nop.reward is not None and nop.reward >= threshold:
        results["partial"] = skipped(
            "partial", "doing nothing already passes (see nop), so a partial solution proves nothing more"
        )
    elif not results["oracle"].passed:
        results["partial"] = skipped(
            "partial", "the reference solution does not pass (see oracle), so there is nothing to take away from"
        )
    else:
        results["partial"] = checks.check_partial(partial, threshold=threshold)
        results["partial"].seconds = round(partial.duration_sec or 0.0, 3)
    return _finish(task_dir, name, content_hash, settings, results, started_at, started, record=record)


def validate_task(path: Path | str, **kwargs: Any) -> ValidationReport:
    """Blocking wrapper around :func:`avalidate_task` for scripts and the CLI."""
    return asyncio.run(avalidate_task(path, **kwargs))

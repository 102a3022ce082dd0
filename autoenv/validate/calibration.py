"""Calibrate a task: would the policy we train learn anything from it?

A task teaches only if the current solver sometimes passes and sometimes
fails it: with GRPO-style training, a group of rollouts that all get the same
reward has zero advantage and contributes no gradient. So calibration runs K
rollouts of a solver, measures the pass rate with a 95% Wilson interval, and
accepts the task when the rate lies in a band (by default: at least one pass
and at least one fail, i.e. non-zero reward variance).

Solvers are given as a SPEC string: ``oracle``, ``nop``, ``coin:p=0.5``,
``terminal:policy=scripted,success_rate=0.5``, ``module.path:Class`` or
``module.path:Class:key=value,...``. Each rollout gets its own seed
(``seed + index``), so a seeded solver gives reproducible calibrations.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harbor.models.task.task import Task
from pydantic import BaseModel, Field, field_validator

from autoenv.spec import SolverSpec
from autoenv.trials.attribution import PARTY_OF_KIND, ErrorKind, Party, stop_on_machine_fault
from autoenv.trials.runner import TrialOutcome, arun_many
from autoenv.validate import cache
from autoenv.validate.stats import wilson_interval
from autoenv.validate.validation import autoenv_version

#: Trial errors that are the solver's own failure (they count as a fail): the agent's party in the one
#: attribution table (:mod:`autoenv.trials.attribution`); anything else (build, setup, an endpoint) says nothing
#: about the solver and is left out of the rate, and a machine fault stops calibration.
SOLVER_ERRORS = {kind for kind, who in PARTY_OF_KIND.items() if who is Party.AGENT}


#: What a solver's own record says when it did not try (the scripted solver without a recipe for the task).
NO_ATTEMPT_INTENTS = {"no_recipe": "the calibration solver has no recipe for tasks of this kind, so it did not try"}


def non_attempt(outcome: TrialOutcome) -> str | None:
    """Why a rollout was no attempt at the task (None: it was one). A solver that did not try, or that stopped
    without a single command, says nothing about how hard the task is: its 0 is not a failed attempt."""
    if outcome.error == ErrorKind.ENDPOINT:
        return "the model endpoint failed"
    path = Path(outcome.trial_dir or ".") / "agent" / "trajectory.json"
    try:
        steps = json.loads(path.read_text()).get("steps") or []
    except (OSError, ValueError, AttributeError):
        return None
    for step in steps:
        intent = (step.get("extra") or {}).get("intent")
        if intent in NO_ATTEMPT_INTENTS:
            return NO_ATTEMPT_INTENTS[intent]
    calls = [c for step in steps if step.get("source") == "agent" for c in (step.get("tool_calls") or [])]
    names = {str(c.get("function_name") or c.get("name") or "") for c in calls}
    if steps and calls and names <= {"finish"}:
        return "the solver stopped without running a command"
    return None


def parse_band(text: str | None) -> tuple[float, float] | None:
    """``"LO,HI"`` -> (lo, hi); None/empty -> None (the non-zero-variance rule)."""
    if not text:
        return None
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"band {text!r}: expected LO,HI such as 0.2,0.8")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"band {text!r}: LO and HI must be numbers") from None
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"band {text!r}: need 0 <= LO <= HI <= 1")
    return lo, hi


class CalibrationSettings(BaseModel):
    solver: str
    rollouts: int = Field(ge=1)
    band: tuple[float, float] | None = None
    threshold: float = 1.0
    env: str = "local"
    seed: int = 0

    @field_validator("band")
    @classmethod
    def _band_ok(cls, band: tuple[float, float] | None) -> tuple[float, float] | None:
        if band is not None and not 0.0 <= band[0] <= band[1] <= 1.0:
            raise ValueError(f"band {band}: need 0 <= LO <= HI <= 1")
        return band

    def key(self) -> str:
        band = "variance" if self.band is None else f"{self.band[0]:g},{self.band[1]:g}"
        return (
            f"solver={self.solver};k={self.rollouts};band={band};"
            f"threshold={self.threshold:g};env={self.env};seed={self.seed}"
        )

    def band_text(self) -> str:
        return (
            "at least one pass and one fail"
            if self.band is None
            else f"{self.band[0]:g} <= pass rate <= {self.band[1]:g}"
        )


class Rollout(BaseModel):
    reward: float | None
    error: str | None = None
    n_turns: int | None = None
    seconds: float = 0.0
    trial_dir: str = ""
    commands: list[str] = Field(default_factory=list, description="the solver's actions, one short line each")
    stopped: str | None = Field(default=None, description="where and how the rollout ended")
    failed_tests: list[str] = Field(default_factory=list, description="the verifier's failing lines")

    def describe(self, index: int) -> list[str]:
        """What a proposer is told about this rollout: reward, turns, the solver's commands and where it stopped."""
        head = f"rollout {index}: reward {self.reward}" + (f", error {self.error}" if self.error else "")
        head += (f", {self.n_turns} turns" if self.n_turns is not None else "") + f", {self.seconds:.1f}s"
        lines = [head]
        if self.commands:
            lines.append("    did: " + " ".join(f"({n}) {c}" for n, c in enumerate(self.commands, 1)))
        if self.stopped:
            lines.append(f"    stopped: {self.stopped}")
        lines += [f"    verifier: {line}" for line in self.failed_tests]
        return lines


#: How much of a rollout a proposer sees: actions listed, characters per action, verifier lines.
SUMMARY_ACTIONS, SUMMARY_CHARS, SUMMARY_TESTS = 12, 100, 4


def _action_line(call: dict[str, Any]) -> str:
    name, args = str(call.get("function_name") or ""), call.get("arguments") or {}
    if name == "run":
        first = str(args.get("command", "")).strip().splitlines()
        text = first[0] + (" ..." if len(first) > 1 else "") if first else ""
    elif name in ("read_file", "write_file"):
        text = f"{name} {args.get('path', '')}"
    else:
        text = f"{name} {str(args.get('message', '')).strip()}".strip()
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def summarize_rollout(outcome: TrialOutcome) -> dict[str, Any]:
    """The solver's commands, where it stopped and the verifier's failing lines, read from the rollout's trial folder
    (its ATIF trajectory and the verifier's output): what a proposer needs to aim at what the solver misses."""
    root = Path(outcome.trial_dir or "")
    stopped: str | None = None
    try:
        steps = json.loads((root / "agent" / "trajectory.json").read_text()).get("steps") or []
    except (OSError, ValueError, AttributeError):
        steps = []
    calls = [c for step in steps if step.get("source") == "agent" for c in (step.get("tool_calls") or [])]
    lines = [_action_line(c) for c in calls]
    commands = (
        lines
        if len(lines) <= SUMMARY_ACTIONS
        else [*lines[: SUMMARY_ACTIONS - 1], f"... {len(lines) - SUMMARY_ACTIONS + 1} more"]
    )
    if calls and calls[-1].get("function_name") == "finish":
        message = str((calls[-1].get("arguments") or {}).get("message", ""))[:160]
        stopped = f"called finish after {len(calls) - 1} actions: {message}"
    elif calls:
        stopped = f"did not finish (turn or time limit); last action: {lines[-1]}"
    elif steps:
        stopped = "took no action"
    if outcome.error:
        stopped = f"{stopped + '; ' if stopped else ''}{outcome.error}: {(outcome.error_message or '')[:160]}"
    try:
        verifier = (root / "verifier" / "test-stdout.txt").read_text(errors="replace").splitlines()
    except OSError:
        verifier = []
    failed = [ln.strip()[:200] for ln in verifier if ln.startswith(("FAILED", "E   ", "FAIL"))][:SUMMARY_TESTS]
    return {"commands": commands, "stopped": stopped, "failed_tests": failed}


class CalibrationReport(BaseModel):
    """On-disk and API form of one calibration (``<task>/.autoenv/calibration.json``)."""

    task: str
    task_name: str
    content_hash: str
    settings: CalibrationSettings
    n: int = Field(description="rollouts that count (infrastructure errors excluded)")
    passes: int
    n_excluded: int = 0
    pass_rate: float | None
    ci_low: float
    ci_high: float
    mean_reward: float | None
    mean_turns: float | None
    accepted: bool
    verdict: str
    inconclusive: bool = Field(
        default=False, description="no rollout was an attempt at the task: nothing was learned about its difficulty"
    )
    n_not_attempted: int = 0
    rollouts: list[Rollout]
    started_at: datetime
    duration_sec: float
    autoenv_version: str = Field(default_factory=autoenv_version)
    cached: bool = False


def judge(passes: int, n: int, band: tuple[float, float] | None) -> tuple[bool, str]:
    """Accept/reject a measured pass rate against the band, with the reason in words."""
    if n == 0:
        return False, "no usable rollouts (all hit infrastructure errors)"
    rate = passes / n
    if band is None:
        if passes == 0:
            return False, f"too hard: 0/{n} rollouts passed (no reward variance)"
        if passes == n:
            return False, f"too easy: {n}/{n} rollouts passed (no reward variance)"
        return True, f"{passes}/{n} passed: reward varies"
    lo, hi = band
    if rate < lo:
        return False, f"too hard: pass rate {rate:.2f} < {lo:g}"
    if rate > hi:
        return False, f"too easy: pass rate {rate:.2f} > {hi:g}"
    return True, f"pass rate {rate:.2f} within [{lo:g}, {hi:g}]"


def default_trials_dir() -> Path:
    return Path("runs") / "calibrate"


def cached_calibration(task_dir: Path | str, settings: CalibrationSettings | None = None) -> CalibrationReport | None:
    return cache.cached_report(task_dir, "calibration", None if settings is None else settings.key(), CalibrationReport)


async def acalibrate(
    path: Path | str,
    *,
    solver: str,
    rollouts: int,
    band: tuple[float, float] | None = None,
    threshold: float = 1.0,
    env: str = "local",
    seed: int = 0,
    n_concurrent: int = 2,
    force: bool = False,
    record: bool = True,
    trials_dir: Path | str | None = None,
    on_done: Any = None,
) -> CalibrationReport:
    """Run ``rollouts`` solver trials on one task and judge the pass rate against ``band``."""
    task_dir = Path(path).resolve()
    if not (task_dir / "task.toml").is_file():
        raise FileNotFoundError(f"{task_dir}: not a task folder (no task.toml)")
    spec = SolverSpec.parse(solver)
    settings = CalibrationSettings(solver=solver, rollouts=rollouts, band=band, threshold=threshold, env=env, seed=seed)
    content_hash = cache.task_content_hash(task_dir)
    hit = (
        None if force else cache.cached_report(task_dir, "calibration", settings.key(), CalibrationReport, content_hash)
    )
    if hit is not None:
        return hit
    started_at, started = datetime.now(UTC), time.monotonic()
    base_seed = spec.kwargs.get("seed", seed)
    jobs = []
    for i in range(rollouts):
        kwargs = dict(spec.kwargs)
        if spec.seeded:
            kwargs["seed"] = base_seed + i if isinstance(base_seed, int) else f"{base_seed}+{i}"
        jobs.append((task_dir, spec.agent, kwargs))
    trials_root = Path(trials_dir or default_trials_dir()).resolve() / f"{task_dir.name}-{content_hash[:8]}"
    outcomes: list[TrialOutcome] = await arun_many(
        jobs, n_concurrent=n_concurrent, on_done=on_done, env=env, trials_dir=trials_root
    )
    stop_on_machine_fault(outcomes)

    counted = [o for o in outcomes if o.error in SOLVER_ERRORS]
    # a rollout in which the solver did not try is no evidence of difficulty: left out of the rate
    skipped = [(o, why) for o in counted if (why := non_attempt(o)) is not None]
    counted = [o for o in counted if all(o is not s for s, _ in skipped)]
    passes = sum(1 for o in counted if o.reward is not None and o.reward >= threshold)
    n = len(counted)
    low, high = wilson_interval(passes, n)
    accepted, verdict = judge(passes, n, band)
    inconclusive = n == 0 and bool(skipped)
    if inconclusive:
        verdict = (
            f"inconclusive: {skipped[0][1]} (0 of {len(skipped)} rollouts were an attempt); nothing was learned about "
            "the task's difficulty"
        )
    elif skipped:
        verdict += f"; {len(skipped)} rollout(s) left out: {skipped[0][1]}"
    excluded = [o for o in outcomes if o.error not in SOLVER_ERRORS]
    if excluded:
        verdict += (
            f"; {len(excluded)} rollout(s) left out for infrastructure errors (first: {excluded[0].error}: "
            f"{(excluded[0].error_message or '')[:200]})"
        )
    rewards = [o.reward if o.reward is not None else 0.0 for o in counted]
    turns = [o.n_turns for o in counted if o.n_turns is not None]
    report = CalibrationReport(
        task=str(task_dir),
        task_name=Task(task_dir).name,
        content_hash=content_hash,
        settings=settings,
        n=n,
        passes=passes,
        n_excluded=len(excluded),
        pass_rate=(passes / n) if n else None,
        ci_low=low,
        ci_high=high,
        mean_reward=(sum(rewards) / n) if n else None,
        mean_turns=(sum(turns) / len(turns)) if turns else None,
        accepted=accepted,
        verdict=verdict,
        inconclusive=inconclusive,
        n_not_attempted=len(skipped),
        rollouts=[
            Rollout(
                reward=o.reward,
                error=o.error,
                n_turns=o.n_turns,
                seconds=o.duration_sec,
                trial_dir=o.trial_dir,
                **summarize_rollout(o),
            )
            for o in outcomes
        ],
        started_at=started_at,
        duration_sec=round(time.monotonic() - started, 3),
    )
    if record:
        cache.save_record(task_dir, "calibration", settings.key(), report)
    return report


def calibrate(path: Path | str, **kwargs: Any) -> CalibrationReport:
    """Blocking wrapper around :func:`acalibrate`."""
    return asyncio.run(acalibrate(path, **kwargs))

"""Run Harbor trials (one task, one agent, one environment) and summarise them.

Harbor's ``Trial`` does the work: environment start, agent phase, tests
upload, verifier and reward parsing. This module only builds its config from
short names and turns its result into the small record the rest of autoenv
(validation, calibration, rollouts) consumes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig
from harbor.models.trial.result import TrialResult
from harbor.trial.trial import Trial
from pydantic import BaseModel

from autoenv.errors import Fault, MachineError, explain
from autoenv.sandbox.backend import IMAGE_RECORD
from autoenv.sandbox.backends import environment_config
from autoenv.sandbox.transfer import read_limit
from autoenv.trials import DEFAULT_TRIALS_DIR
from autoenv.trials.attribution import ERROR_KINDS, ErrorKind, error_kind, stop_on_machine_fault
from autoenv.vocab import AUTOENV_AGENTS

T = TypeVar("T")


class TrialOutcome(BaseModel):
    """What one trial produced, in the shape autoenv's stages consume."""

    task: str
    agent: str
    environment: str
    reward: float | None
    rewards: dict[str, float] | None = None
    error: str | None = None
    error_message: str | None = None
    trial_dir: str
    duration_sec: float
    agent_sec: float | None = None
    n_turns: int | None = None
    #: base images that could not be pulled and what stood in for them (never silent)
    stand_ins: list[str] = []

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= 1.0


def agent_config(agent: str, *, model: str | None = None, kwargs: dict[str, Any] | None = None) -> AgentConfig:
    """Harbor AgentConfig from a short name (oracle, nop, terminal, ...) or ``module:Class``."""
    kwargs = dict(kwargs or {})
    spec_model = kwargs.pop("model", None)  # a solver spec's model=NAME is Harbor's model_name, not an agent option
    model = model or spec_model
    if agent in AUTOENV_AGENTS:
        return AgentConfig(import_path=AUTOENV_AGENTS[agent], model_name=model, kwargs=kwargs or {})
    if ":" in agent:
        return AgentConfig(import_path=agent, model_name=model, kwargs=kwargs or {})
    return AgentConfig(name=agent, model_name=model, kwargs=kwargs or {})


def default_trials_dir() -> Path:
    return DEFAULT_TRIALS_DIR


def _outcome(result: TrialResult, agent: str, env: str, started: float) -> TrialOutcome:
    rewards = result.verifier_result.rewards if result.verifier_result else None
    reward = None
    if rewards:
        reward = float(rewards.get("reward", next(iter(rewards.values()))))
    error = message = None
    if result.exception_info is not None:
        error = error_kind(result.exception_info.exception_type)
        message = result.exception_info.exception_message[-2000:]
    trial_dir = Path(result.trial_uri.removeprefix("file://"))
    if (limit := read_limit(trial_dir)) is not None and error in (None, ErrorKind.SANDBOX, ErrorKind.REWARD_MISSING):
        # what the agent left passed a bound of the trial: its failure, whatever the verifier made of the rest
        reward, rewards, error, message = 0.0, {"reward": 0.0}, str(ErrorKind.AGENT_LIMIT), limit
    agent_sec = None
    if result.agent_execution and result.agent_execution.started_at and result.agent_execution.finished_at:
        agent_sec = (result.agent_execution.finished_at - result.agent_execution.started_at).total_seconds()
    n_turns = None
    if result.agent_result is not None and result.agent_result.metadata:
        n_turns = result.agent_result.metadata.get("n_turns")
    return TrialOutcome(
        task=result.task_name,
        agent=agent,
        environment=env,
        reward=reward,
        rewards={k: float(v) for k, v in rewards.items()} if rewards else None,
        error=error,
        error_message=message,
        trial_dir=str(trial_dir),
        duration_sec=round(time.monotonic() - started, 3),
        agent_sec=agent_sec,
        n_turns=n_turns,
        stand_ins=_stand_ins(trial_dir),
    )


def _stand_ins(trial_dir: Path) -> list[str]:
    """What the backend recorded about substituted base images (see IMAGE_RECORD)."""
    record = trial_dir / IMAGE_RECORD
    try:
        return [s["note"] for s in json.loads(record.read_text()).get("substitutions", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


async def arun_trial(
    task_dir: Path | str,
    agent: str = "oracle",
    *,
    env: str = "local",
    model: str | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    trials_dir: Path | str | None = None,
    agent_timeout_sec: float | None = None,
    timeout_multiplier: float = 1.0,
    env_kwargs: dict[str, Any] | None = None,
    deadline_sec: float | None = None,
) -> TrialOutcome:
    """Run one trial through Harbor's Trial machinery, cancelled as hung past ``deadline_sec`` (default: its own
    timeouts and a margin, :func:`trial_deadline`)."""
    task_dir = Path(task_dir).resolve()
    agent_cfg = agent_config(agent, model=model, kwargs=agent_kwargs)
    if agent_timeout_sec is not None:
        agent_cfg.override_timeout_sec = agent_timeout_sec
    config = TrialConfig(
        task=TaskConfig(path=task_dir),
        trial_name=f"{task_dir.name}__{agent.split(':')[-1].lower()}__{uuid.uuid4().hex[:8]}",
        trials_dir=Path(trials_dir or default_trials_dir()).resolve(),
        agent=agent_cfg,
        environment=environment_config(env, **(env_kwargs or {})),
        timeout_multiplier=timeout_multiplier,
    )
    started = time.monotonic()
    trial = await Trial.create(config)
    deadline = trial_deadline(trial) if deadline_sec is None else deadline_sec
    result = await _run_within(trial, deadline)
    if result is None:
        return _hung(trial, agent, env, started, deadline)
    return _outcome(result, agent, env, started)


#: Seconds a trial may take past the sum of its own timeouts before it counts as hung: its outputs' transfers
#: (bounded in seconds themselves), two teardowns and the harness's own steps, on a loaded machine.
HANG_MARGIN_SEC = 300.0
#: Seconds a hung trial gets, once cancelled, to wind up (Harbor records the cancellation and stops its sandboxes).
CANCEL_GRACE_SEC = 30.0


def trial_deadline(trial: Trial) -> float | None:
    """Seconds after which ``trial`` has hung: its sandboxes' builds (the agent's and a separate verifier's), the
    agent's set-up and run, the verifier, and :data:`HANG_MARGIN_SEC`, as Harbor resolved them for this trial
    (multipliers included). None where the agent has no timeout.

    Each phase has a timeout of its own, but a step between them can wait forever (a ``docker compose down``
    on a wedged daemon; Harbor's teardown has no timeout): one such trial would stall a whole step of training."""
    if trial.agent_timeout_sec is None:
        return None
    phases = 2 * trial.environment_build_timeout_sec + trial.agent_setup_timeout_sec
    return phases + trial.agent_timeout_sec + trial.verifier_timeout_sec + HANG_MARGIN_SEC


async def _run_within(trial: Trial, deadline: float | None) -> TrialResult | None:
    """``trial.run()``, cancelled past ``deadline`` seconds: its result, or None when it did not end even then.

    Harbor's trial catches a cancellation that reaches its sandboxes' teardown (shielded) and returns its
    result: a trial whose verdict was in before it hung keeps its verdict."""
    run = asyncio.ensure_future(trial.run())
    try:
        await asyncio.wait({run}, timeout=deadline)
    finally:  # past the deadline, or the caller cancelled: the trial winds up (within the grace) before this ends
        if not run.done():
            run.cancel()
            await asyncio.wait({run}, timeout=CANCEL_GRACE_SEC)
    if run.done() and not run.cancelled():
        return run.result()  # raises what the trial raised
    return None


#: Harbor's phases of a trial, in order, as its result times them.
PHASES = (
    ("environment_setup", "starting its sandbox"),
    ("agent_setup", "setting up the agent"),
    ("agent_execution", "the agent's run"),
    ("verifier", "the verifier"),
)


def _hung(trial: Trial, agent: str, env: str, started: float, deadline: float | None) -> TrialOutcome:
    """The outcome of a trial cancelled past its deadline: the agent's failure once its set-up had begun (root in the
    sandbox may be what hangs the harness), the machine's before (no code of the agent's had run)."""
    result = trial.result
    timings = [(getattr(result, name), what) for name, what in PHASES]
    begun = [(timing, what) for timing, what in timings if timing is not None and timing.started_at is not None]
    at = next((what for timing, what in reversed(begun) if timing.finished_at is None), None)
    at = at or (f"after {begun[-1][1]}: collecting outputs or stopping its sandboxes" if begun else "its start")
    agent_began = result.agent_setup is not None or result.agent_execution is not None
    return TrialOutcome(
        task=result.task_name,
        agent=agent,
        environment=env,
        reward=0.0 if agent_began else None,
        error=str(ErrorKind.HUNG if agent_began else ErrorKind.MACHINE),
        error_message=f"the trial did not end within its deadline ({deadline:g} s) and was cancelled; it was at: {at}",
        trial_dir=str(trial.paths.trial_dir),
        duration_sec=round(time.monotonic() - started, 3),
    )


def run_trial(task_dir: Path | str, agent: str = "oracle", **kwargs: Any) -> TrialOutcome:
    """Blocking wrapper around :func:`arun_trial` for scripts and the CLI."""
    return run_bounded(arun_trial(task_dir, agent, **kwargs))


def run_bounded(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, except that what is left running when ``main`` returns (the teardown of a hung
    trial, which may never return) gets :data:`CANCEL_GRACE_SEC` once cancelled, not forever: the caller gets
    ``main``'s result."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        leftovers = asyncio.all_tasks(loop)
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.wait(leftovers, timeout=CANCEL_GRACE_SEC))
        loop.run_until_complete(loop.shutdown_asyncgens())
        # the loop's threads (asyncio.to_thread), as asyncio.run ends them: a process that runs many trials keeps none
        loop.run_until_complete(loop.shutdown_default_executor(CANCEL_GRACE_SEC))
        loop.close()


def quiet_harbor_logs(level: int = logging.WARNING) -> None:
    """Harbor logs every phase at INFO; the CLI shows its own progress instead."""
    logging.getLogger("harbor").setLevel(level)


async def arun_many(
    jobs: list[tuple[Path, str]] | list[tuple[Path, str, dict[str, Any]]],
    *,
    n_concurrent: int = 2,
    on_done: Any = None,
    stop_on_machine: bool = True,
    **kwargs: Any,
) -> list[TrialOutcome]:
    """Run (task, agent[, agent kwargs overrides]) jobs, at most ``n_concurrent`` at once, in input order.

    A trial that failed for the machine's fault (:mod:`autoenv.trials.attribution`) raises :class:`MachineError`
    once all have ended (``stop_on_machine=False`` returns it as an outcome): every stage that runs trials
    (validation, calibration, the benchmark, an audit) stops on it instead of recording it as a verdict."""
    semaphore = asyncio.Semaphore(max(1, n_concurrent))

    async def one(task_dir: Path, agent: str, overrides: dict[str, Any]) -> TrialOutcome:
        job_kwargs = dict(kwargs)
        if overrides:
            job_kwargs["agent_kwargs"] = {**(kwargs.get("agent_kwargs") or {}), **overrides}
        async with semaphore:
            try:
                outcome = await arun_trial(task_dir, agent, **job_kwargs)
            except Exception as exc:  # noqa: BLE001 - a task Harbor cannot load, or a backend that cannot run it
                kind = explain(exc, task=task_dir, env=kwargs.get("env", "local")).kind
                by_fault = {Fault.BACKEND: ErrorKind.BACKEND_UNSUPPORTED, Fault.SANDBOX: ErrorKind.SANDBOX}
                error = by_fault.get(kind, ErrorKind.INVALID_TASK)
                if isinstance(exc, MachineError):
                    error = ErrorKind.MACHINE
                outcome = TrialOutcome(
                    task=Path(task_dir).name,
                    agent=agent,
                    environment=kwargs.get("env", "local"),
                    reward=None,
                    error=str(error),
                    error_message=str(exc)[-2000:],
                    trial_dir="",
                    duration_sec=0.0,
                )
        if on_done is not None:
            on_done(outcome)
        return outcome

    outcomes = list(await asyncio.gather(*(one(job[0], job[1], job[2] if len(job) > 2 else {}) for job in jobs)))
    if stop_on_machine:
        stop_on_machine_fault(outcomes)
    return outcomes


__all__ = [
    "ERROR_KINDS",
    "TrialOutcome",
    "arun_many",
    "arun_trial",
    "run_bounded",
    "run_trial",
    "stop_on_machine_fault",
    "trial_deadline",
]

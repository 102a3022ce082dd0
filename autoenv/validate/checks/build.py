"""Build: the environment builds within the task's build_timeout_sec (by a backend that builds images before its
trials, or judged from the trials)."""

from __future__ import annotations

import time
from pathlib import Path

from harbor.environments.definition import environment_content_hash
from harbor.models.task.task import Task

from autoenv.errors import BuildError
from autoenv.sandbox.backend import Backend, BuiltImage
from autoenv.trials.attribution import ErrorKind
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import BUILD, Check, CheckResult, Context, Outcomes, Trial
from autoenv.validate.checks.evidence import phase_seconds, tail


async def check_build_local(
    task_dir: Path, backend: Backend, *, force: bool = False
) -> tuple[CheckResult, BuiltImage | None]:
    """Build (or reuse) the backend's image within the task's build_timeout_sec."""
    task = Task(task_dir)
    env_cfg = task.config.environment
    env_dir = task.paths.environment_dir
    key = environment_content_hash(env_dir, docker_image=env_cfg.docker_image)
    started = time.monotonic()
    cached = backend.is_built(key) and not force
    try:
        image = await backend.build(
            env_dir, key=key, docker_image=env_cfg.docker_image, timeout_sec=env_cfg.build_timeout_sec, force=force
        )
    except BuildError as exc:
        seconds = round(time.monotonic() - started, 3)
        message = str(exc)
        return CheckResult(
            name="build",
            passed=False,
            seconds=seconds,
            summary=f"environment failed to build: {message.splitlines()[0][:200]}",
            evidence={"error": tail(message), "build_timeout_sec": env_cfg.build_timeout_sec},
            feedback=f"environment/Dockerfile does not build ({backend.name} backend):\n{tail(message)}",
        ), None
    seconds = round(time.monotonic() - started, 3)
    return CheckResult(
        name="build",
        passed=True,
        seconds=seconds,
        summary=f"built in {seconds:.1f}s"
        + (" (cached image)" if cached else "")
        + f", limit {env_cfg.build_timeout_sec:g}s",
        evidence={"image": str(image.directory), "cached": cached, "build_timeout_sec": env_cfg.build_timeout_sec},
    ), image


def check_build_from_trials(outcomes: list[TrialOutcome], build_timeout_sec: float) -> CheckResult:
    """Non-local backends build inside the trial: judge the build from the trials' errors."""
    failed = [o for o in outcomes if o.error == ErrorKind.BUILD]
    setup = [s for o in outcomes if o.trial_dir and (s := phase_seconds(o.trial_dir, "environment_setup")) is not None]
    if failed:
        message = failed[0].error_message or "build failed"
        return CheckResult(
            name="build",
            passed=False,
            summary=f"environment failed to build: {message.splitlines()[0][:200]}",
            evidence={"error": tail(message), "trial_dir": failed[0].trial_dir},
            feedback=f"environment/Dockerfile does not build:\n{tail(message)}",
        )
    longest = max(setup, default=0.0)
    return CheckResult(
        name="build",
        passed=True,
        summary=f"environment started in at most {longest:.1f}s (limit {build_timeout_sec:g}s)",
        evidence={"environment_setup_sec": setup},
    )


class BuildCheck(Check):
    name = "build"
    stage = BUILD
    blocks = True  # no trial runs without an environment

    def needs(self, ctx: Context) -> frozenset[Trial]:
        # a backend that builds images builds directly (a broken line is reported without a trial); others build in
        # the first stage's trials
        return frozenset() if ctx.builds_images else frozenset({"oracle", "nop", "scan"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        if ctx.builds_images:
            result, ctx.image = await check_build_local(ctx.task_dir, ctx.backend, force=ctx.force)
            return result
        return check_build_from_trials(outcomes.all(), ctx.task.config.environment.build_timeout_sec)


CHECK = BuildCheck()

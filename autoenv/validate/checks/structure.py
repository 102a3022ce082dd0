"""Structure: Harbor's lint and autoenv's static checks (``autoenv task check``)."""

from __future__ import annotations

import time
from pathlib import Path

from autoenv.shared.settings import ValidationSettings
from autoenv.taskfmt.check import Level, Problem, check_task, errors
from autoenv.validate.checks.base import STATIC, Check, CheckResult, Context, Outcomes


def _count(problems: list[Problem]) -> str:
    counts = [f"{n} {level}(s)" for level in Level if (n := sum(p.level == level for p in problems))]
    return ", ".join(counts)


def check_structure(task_dir: Path, settings: ValidationSettings) -> CheckResult:
    """Harbor's lint and autoenv's static checks; only errors (and warnings when ``settings.strict``) fail it."""
    started = time.monotonic()
    problems = check_task(task_dir, env=settings.env, oracle=settings.oracle)
    seconds = round(time.monotonic() - started, 3)
    strict = settings.strict
    failing = errors(problems, strict=strict)
    evidence = {"problems": [p.model_dump(mode="json") for p in problems]}
    if not failing:
        summary = "task check: well formed" + (f" ({_count(problems)})" if problems else "")
        return CheckResult(
            name="structure", passed=True, summary=summary, seconds=seconds, evidence=evidence, findings=problems
        )
    listing = "\n".join(str(p) for p in failing[:20])
    return CheckResult(
        name="structure",
        passed=False,
        seconds=seconds,
        findings=problems,
        summary=f"{_count(problems)} found by `autoenv task check`" + (" (warnings count: --strict)" if strict else ""),
        evidence=evidence,
        feedback=f"The task is not well formed (`autoenv task check`):\n{listing}",
    )


class StructureCheck(Check):
    name = "structure"
    stage = STATIC

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        return check_structure(ctx.task_dir, ctx.settings)


CHECK = StructureCheck()

"""The ``oracle`` check without a reference solution: k attempts by an agent (``--oracle-agent SPEC``).

A dataset that ships no solution can still show that its task is solvable: an agent that passes the tests once is
evidence a correct answer passes (the verdict can be valid). No passing attempt is "unsolved in k tries": the
verdict stays undetermined (no flaw found, solvability unknown), never invalid, since a weak agent failing says
little about the task. The scripted solver (``terminal:policy=scripted,success_rate=1``) serves the families'
tasks. The passing attempt is not turned into a reference script, so the checks that run the solution again
(determinism, partial solution, timeouts, probes) stay "not run".
"""

from __future__ import annotations

from typing import Any

from autoenv.spec import SolverSpec
from autoenv.validate.checks.base import CheckResult, Context
from autoenv.validate.checks.evidence import describe, trial_evidence


async def agent_oracle(ctx: Context, spec_text: str, attempts: int) -> CheckResult:
    """Run ``attempts`` trials of the agent ``spec_text`` and judge them as the oracle check."""
    spec = SolverSpec.parse(spec_text, ctx.settings.env)
    jobs: list[tuple[str, dict[str, Any]]] = []
    for i in range(attempts):
        kwargs = dict(spec.kwargs)
        if spec.seeded:
            kwargs["seed"] = int(kwargs.get("seed", 0)) + i
        jobs.append((spec.agent, kwargs))
    outcomes = await ctx.run(jobs)
    rewards = [o.reward for o in outcomes]
    evidence = {
        "oracle_agent": spec_text,
        "attempts": attempts,
        "rewards": rewards,
        "runs": [trial_evidence(o) for o in outcomes],
    }
    seconds = round(sum(o.duration_sec or 0.0 for o in outcomes), 3)
    solved = next((i for i, o in enumerate(outcomes) if o.reward is not None and o.reward >= ctx.threshold), None)
    found: dict[str, Any]  # what the evidence adds: unsolved, or which attempt solved it
    if solved is None:  # undetermined, never invalid: a weak agent failing says little about the task
        worst = describe(outcomes[0]) if outcomes else "no attempt"
        passed, found = None, {"unsolved": True}
        summary = (
            f"not run: no reference solution, and {spec_text} left it unsolved in {attempts} tries (first: {worst})"
        )
    else:
        passed, found = True, {"solved_by": solved}
        summary = (
            f"no reference solution; {spec_text} solved it in attempt {solved + 1} of {attempts} (rewards {rewards})"
        )
    return CheckResult(name="oracle", passed=passed, seconds=seconds, evidence=evidence | found, summary=summary)


__all__ = ["agent_oracle"]

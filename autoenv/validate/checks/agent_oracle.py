"""The ``oracle`` check without a reference solution: k attempts by an agent (``--oracle-agent SPEC``).

A dataset that ships no solution can still show that its task is solvable: an agent that passes the tests once is
evidence a correct answer passes (the verdict can be valid). No passing attempt is "unsolved in k tries": the
verdict stays undetermined (no flaw found, solvability unknown), never invalid, since a weak agent failing says
little about the task. The scripted solver (``terminal:policy=scripted,success_rate=1``) serves the families'
tasks.

A passing attempt of autoenv's terminal agent becomes the task's reference solution (:mod:`autoenv.agents.replay`:
its actions in order, as ``solution/solve.sh`` in a copy of the task beside the trials): once one trial of it passes,
the checks that run the solution again (the oracle repeated, determinism, the partial solution, timeouts, probes)
run on it as on a shipped solution. A script that does not pass when replayed (time, randomness) or an agent whose
actions cannot be replayed leaves those checks "not run": the attempt alone is the evidence, and the evidence says so.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from autoenv.agents.replay import TRAJECTORY, solution_from_trajectory
from autoenv.spec import SolverSpec
from autoenv.taskfmt.hashing import IGNORED_PARTS
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import TRIAL_AGENTS, CheckResult, Context
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
        reference = await _derived_reference(ctx, outcomes[solved])
        said = (
            f"; its actions, replayed as solution/solve.sh, pass too ({reference['script']}): the checks that rerun "
            "the solution use them"
            if reference.get("replayed")
            else f"; {reference['not_used']}"
        )
        passed, found = True, {"solved_by": solved, "reference": reference}
        summary = (
            f"no reference solution; {spec_text} solved it in attempt {solved + 1} of {attempts} (rewards {rewards})"
            + said
        )
    return CheckResult(name="oracle", passed=passed, seconds=seconds, evidence=evidence | found, summary=summary)


async def _derived_reference(ctx: Context, attempt: TrialOutcome) -> dict[str, Any]:
    """Make the passing ``attempt`` the task's reference solution where it replays (``ctx.solution_dir`` set and
    ``ctx.run_oracle`` on); what happened, for the evidence."""
    if not attempt.trial_dir:
        return {"not_used": "the attempt left no trial folder, so the checks that rerun the solution are not run"}
    script = solution_from_trajectory(Path(attempt.trial_dir) / "agent" / TRAJECTORY)
    if script is None:
        return {
            "not_used": "its actions cannot be replayed as a script (not autoenv's terminal agent, or no action "
            "that changes anything), so the checks that rerun the solution are not run"
        }
    shadow = Path(attempt.trial_dir).parent / "derived-reference" / ctx.task_dir.name
    shutil.rmtree(shadow, ignore_errors=True)
    shutil.copytree(ctx.task_dir, shadow, ignore=shutil.ignore_patterns(*IGNORED_PARTS, "*.pyc"))
    solve = shadow / "solution" / "solve.sh"
    shutil.rmtree(solve.parent, ignore_errors=True)  # the task's own solution folder only, at its top
    solve.parent.mkdir()
    solve.write_text(script)
    solve.chmod(0o755)
    (replay,) = await ctx.run([(TRIAL_AGENTS["oracle"], {"task_dir": str(shadow)})])
    reference: dict[str, Any] = {"script": str(solve), "replay": trial_evidence(replay)}
    if replay.reward is None or replay.reward < ctx.threshold:
        return reference | {
            "not_used": f"its actions replayed as a script did not pass ({describe(replay)}), so the checks "
            "that rerun the solution are not run"
        }
    ctx.solution_dir = shadow
    ctx.run_oracle = True
    return reference | {"replayed": True}


__all__ = ["agent_oracle"]

"""Timeouts: the reference solution and the verifier use at most a share of their time limits."""

from __future__ import annotations

from autoenv.trials.attribution import ErrorKind
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import CheckResult, Context, OracleRunsCheck, Outcomes
from autoenv.validate.checks.evidence import first_line, phase_seconds


def check_timeouts(
    oracle: list[TrialOutcome],
    *,
    agent_timeout_sec: float | None,
    verifier_timeout_sec: float | None,
    margin: float = 0.5,
) -> CheckResult:
    """The oracle (and the verifier on its output) must use at most ``margin`` of their time limits.

    A scripted solution is far faster than any agent; one that needs most of
    the agent's budget leaves an agent no time to think, and a verifier near
    its limit turns machine load into wrong verdicts.
    """
    agent_secs = [
        s
        for o in oracle
        if (s := o.agent_sec if o.agent_sec is not None else phase_seconds(o.trial_dir, "agent_execution")) is not None
    ]
    verifier_secs = [s for o in oracle if o.trial_dir and (s := phase_seconds(o.trial_dir, "verifier")) is not None]
    timed_out = [o for o in oracle if o.error in (ErrorKind.AGENT_TIMEOUT, ErrorKind.VERIFIER_TIMEOUT)]
    evidence = {
        "oracle_agent_sec": agent_secs,
        "verifier_sec": verifier_secs,
        "agent_timeout_sec": agent_timeout_sec,
        "verifier_timeout_sec": verifier_timeout_sec,
        "margin": margin,
    }
    problems = []
    if timed_out:
        problems.append(f"the oracle run hit {timed_out[0].error} ({first_line(timed_out[0].error_message)})")
    if agent_timeout_sec and agent_secs and max(agent_secs) > margin * agent_timeout_sec:
        problems.append(
            f"the reference solution took {max(agent_secs):.1f}s, more than {margin:.0%} of the agent timeout "
            f"({agent_timeout_sec:g}s)"
        )
    if verifier_timeout_sec and verifier_secs and max(verifier_secs) > margin * verifier_timeout_sec:
        problems.append(
            f"the verifier took {max(verifier_secs):.1f}s, more than {margin:.0%} of its timeout "
            f"({verifier_timeout_sec:g}s)"
        )
    if not agent_secs and not timed_out:
        return CheckResult(name="timeouts", passed=None, summary="no oracle timing available", evidence=evidence)
    if problems:
        return CheckResult(
            name="timeouts",
            passed=False,
            summary="; ".join(problems),
            evidence=evidence,
            feedback="Time limits are too tight: "
            + "; ".join(problems)
            + ". Raise [agent].timeout_sec / [verifier].timeout_sec in task.toml "
            f"to at least {1 / margin:g}x what the reference run needs, or make the solution/tests faster.",
        )
    summary = (
        f"oracle {max(agent_secs):.1f}s of {agent_timeout_sec:g}s"
        if agent_timeout_sec
        else f"oracle {max(agent_secs):.1f}s (no agent timeout set)"
    )
    if verifier_secs:
        summary += (
            f", verifier {max(verifier_secs):.1f}s of {verifier_timeout_sec:g}s"
            if verifier_timeout_sec
            else f", verifier {max(verifier_secs):.1f}s"
        )
    return CheckResult(name="timeouts", passed=True, summary=summary, evidence=evidence)


class TimeoutsCheck(OracleRunsCheck):
    name = "timeouts"

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        cfg = ctx.task.config
        return check_timeouts(
            outcomes.oracle,
            agent_timeout_sec=cfg.agent.timeout_sec,
            verifier_timeout_sec=cfg.verifier.timeout_sec,
            margin=ctx.settings.timeout_margin,
        )


CHECK = TimeoutsCheck()

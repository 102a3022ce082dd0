"""Deterministic: the reference solution's runs in identical fresh environments get one verdict."""

from __future__ import annotations

from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import CheckResult, Context, OracleRunsCheck, Outcomes
from autoenv.validate.checks.evidence import describe, outputs_block, trial_evidence


def check_deterministic(outcomes: list[TrialOutcome]) -> CheckResult:
    verdicts = [(None if o.reward is None else round(o.reward, 6), o.error) for o in outcomes]
    rewards = [o.reward for o in outcomes]
    if len(set(verdicts)) <= 1:
        return CheckResult(
            name="deterministic",
            passed=True,
            summary=f"{len(outcomes)} oracle runs agree ({describe(outcomes[0])})" if outcomes else "no runs",
            evidence={"rewards": rewards},
        )
    first = outcomes[0]
    other = next(o for o in outcomes if (None if o.reward is None else round(o.reward, 6), o.error) != verdicts[0])
    a, b = trial_evidence(first, agent_log="oracle.txt"), trial_evidence(other, agent_log="oracle.txt")
    return CheckResult(
        name="deterministic",
        passed=False,
        summary=f"the same solution got different verdicts: {', '.join(describe(o) for o in outcomes)}",
        evidence={"rewards": rewards, "errors": [o.error for o in outcomes], "runs": [a, b]},
        feedback=(
            "The verdict is not deterministic: the reference solution, run "
            f"{len(outcomes)} times in identical fresh environments, got {', '.join(describe(o) for o in outcomes)}. "
            "Remove randomness, timing, network or other external dependencies from the tests and the solution.\n"
            f"Run with {describe(first)}:\n{outputs_block(a)}\n\nRun with {describe(other)}:\n{outputs_block(b)}"
        ),
    )


class DeterministicCheck(OracleRunsCheck):
    name = "deterministic"

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        return check_deterministic(outcomes.oracle)


CHECK = DeterministicCheck()

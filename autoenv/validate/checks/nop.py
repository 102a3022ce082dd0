"""Nop: an agent that does nothing gets reward 0 (and the verifier writes it)."""

from __future__ import annotations

from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import FIRST, Check, CheckResult, Context, Outcomes
from autoenv.validate.checks.evidence import describe, network_advice, outputs_block, trial_evidence


def check_nop(outcome: TrialOutcome, *, offline: bool = False) -> CheckResult:
    evidence = trial_evidence(outcome)
    if outcome.error is None and outcome.reward == 0:
        return CheckResult(name="nop", passed=True, summary="doing nothing gets reward 0", evidence=evidence)
    if outcome.reward is not None and outcome.reward > 0:
        return CheckResult(
            name="nop",
            passed=False,
            summary=f"doing nothing gets reward {outcome.reward:g}",
            evidence=evidence,
            feedback=(
                f"An agent that does nothing gets reward {outcome.reward:g}: the environment already satisfies the "
                f"tests "
                "(the expected output exists before the agent starts, or the tests check too little). "
                "The tests must fail on the untouched environment.\n" + outputs_block(evidence)
            ),
        )
    return CheckResult(
        name="nop",
        passed=False,
        summary=f"on the untouched environment the verifier produced {describe(outcome)}, not reward 0",
        evidence=evidence,
        feedback=network_advice(evidence, offline)
        + (
            f"On the untouched environment the verifier ended with {describe(outcome)} instead of writing reward 0. "
            "tests/test.sh must always write /logs/verifier/reward.txt (0 on failure), also when expected files are "
            "missing.\n" + outputs_block(evidence)
        ),
    )


class NopCheck(Check):
    name = "nop"
    stage = FIRST

    trials = frozenset({"nop"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        assert outcomes.nop is not None
        result = check_nop(outcomes.nop, offline=ctx.offline)
        result.seconds = round(outcomes.nop.duration_sec or 0.0, 3)
        return result


CHECK = NopCheck()

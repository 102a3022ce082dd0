"""Probes: the solution must do in the partial trial what it did in the oracle's runs.

Validation's oracle runs carry the partial trial's probes too (:class:`autoenv.agents.partial.ProbedOracleAgent`),
so ``solve.sh`` cannot tell the trials apart; each records the files the solution changed. A partial trial whose
solution changed no file while the oracle's runs changed some has a solution that noticed it was being probed (the
partial check would then have nothing to damage and say "not run"): that fails here. A solution that changes no
file in any run (its result is a deletion, a permission, a process) passes: the partial check has nothing to take.
"""

from __future__ import annotations

from autoenv.agents.partial import changed_files
from autoenv.validate.checks.base import SECOND, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.evidence import describe


def check_probes(oracle_changed: list[list[str] | None], partial_changed: list[str] | None) -> CheckResult:
    """``oracle_changed``: the files each oracle run's solution changed; ``partial_changed``: the partial trial's."""
    evidence = {"oracle_changed": [c[:20] if c else c for c in oracle_changed], "partial_changed": partial_changed}
    if partial_changed is None or not oracle_changed or any(c is None for c in oracle_changed):
        return CheckResult(
            name="probes", passed=None, evidence=evidence, summary="not run: a probed trial recorded no changed files"
        )
    if partial_changed:
        return CheckResult(
            name="probes",
            passed=True,
            evidence=evidence,
            summary=f"the solution changed files in the partial trial ({len(partial_changed)}) as in the oracle's",
        )
    changed = next((c for c in oracle_changed if c), None)
    if changed is None:
        return CheckResult(
            name="probes", passed=True, evidence=evidence, summary="the solution changes no file in any run"
        )
    listing = ", ".join(changed[:5])
    return CheckResult(
        name="probes",
        passed=False,
        evidence=evidence,
        summary=f"the solution changed {len(changed)} file(s) in the oracle's runs ({listing}) and none in the "
        "partial-solution trial",
        feedback=(
            f"solution/solve.sh changed {listing} when validation ran it as the oracle, and no file at all when it "
            "ran it for the partial-solution check (its outputs damaged, to see that the tests notice). The solution "
            "behaves differently depending on how it is run: it must do the same work every time, whatever it finds "
            "in /tmp or the environment besides the task's inputs."
        ),
    )


class ProbesCheck(Check):
    name = "probes"
    stage = SECOND
    needs_oracle = True

    trials = frozenset({"oracle", "partial"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        nop, partial = outcomes.nop, outcomes.partial
        assert nop is not None and partial is not None
        if nop.reward is not None and nop.reward >= ctx.threshold:
            return skipped("probes", "doing nothing already passes (see nop)")
        if not ctx.results["oracle"].passed:
            return skipped("probes", "the reference solution does not pass (see oracle)")
        oracle = [changed_files(o.trial_dir) if o.trial_dir else None for o in outcomes.oracle]
        result = check_probes(oracle, changed_files(partial.trial_dir) if partial.trial_dir else None)
        if result.passed is None:
            result.summary += f" (partial trial: {describe(partial)})"
        return result


CHECK = ProbesCheck()

"""Partial: the reference solution with its outputs cut in half must fail the tests."""

from __future__ import annotations

from autoenv.agents.partial import created_outputs, mutated_files
from autoenv.trials.attribution import ErrorKind
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import SECOND, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.evidence import describe, outputs_block, trial_evidence


def check_partial(outcome: TrialOutcome, *, threshold: float = 1.0) -> CheckResult:
    """Judge a partial-solution trial: the reference solution with its outputs cut in half must fail."""
    evidence = trial_evidence(outcome, agent_log="oracle.txt")
    mutated = mutated_files(outcome.trial_dir) if outcome.trial_dir else None
    evidence["mutated"] = mutated
    if outcome.error in (ErrorKind.BUILD, ErrorKind.INVALID_TASK, ErrorKind.SANDBOX) or mutated is None:
        return CheckResult(
            name="partial",
            passed=None,
            evidence=evidence,
            summary=f"partial-solution trial did not run: {describe(outcome)}",
        )
    created = created_outputs(outcome.trial_dir) if outcome.trial_dir else []
    if not mutated and created:
        # validation's own busybox scanned the sandbox; a file the solution made that it did not see was hidden
        return CheckResult(
            name="partial",
            passed=False,
            evidence={**evidence, "created": created},
            summary=f"the solution created {', '.join(created[:5])} (named in the instruction), but the partial "
            "trial found no changed file to damage",
            feedback=(
                f"solution/solve.sh created {', '.join(created[:5])}, which the instruction names, yet a scan of the "
                "sandbox for files changed since the solution started found none: the outputs could not be damaged "
                "to check that the tests notice. Write outputs as ordinary files where the instruction says, and do "
                "not replace or shadow system programs (find, sh, cp) in solve.sh or the Dockerfile."
            ),
        )
    if not mutated:
        return CheckResult(
            name="partial",
            passed=None,
            evidence=evidence,
            summary="not run: the reference solution changed no file outside system folders (its result is a deletion, "
            "a permission or a process), so there was nothing to take away",
        )
    listing = "\n".join(f"- {m['path']}: {m['how']}" for m in mutated[:15])
    if outcome.reward is None or outcome.reward < threshold:
        return CheckResult(
            name="partial",
            passed=True,
            evidence=evidence,
            summary=f"a partial solution ({len(mutated)} output(s) cut in half) got {describe(outcome)}",
        )
    return CheckResult(
        name="partial",
        passed=False,
        evidence=evidence,
        summary=f"a partial solution got reward {outcome.reward:g}: the tests do not notice outputs cut in half",
        feedback=(
            f"The tests pass a partial solution: solution/solve.sh ran, then every file it wrote was cut to its first "
            f"half "
            f"(or, for one-character answers, shifted by one letter or digit), and the verifier still gave reward "
            f"{outcome.reward:g}. "
            "The tests check that outputs exist or are not empty, not that they are right. Compare the outputs' "
            "content "
            "(the expected values, every row, the program's behaviour on inputs) so that any incomplete answer fails.\n"
            f"Files damaged:\n{listing}\n" + outputs_block(evidence)
        ),
    )


class PartialCheck(Check):
    name = "partial"
    stage = SECOND
    needs_oracle = True
    may_not_run = True  # a partial solution cannot be made of a solution that changes no file

    trials = frozenset({"partial"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        nop, partial = outcomes.nop, outcomes.partial
        assert nop is not None and partial is not None
        if nop.reward is not None and nop.reward >= ctx.threshold:
            return skipped(
                "partial", "doing nothing already passes (see nop), so a partial solution proves nothing more"
            )
        if not ctx.results["oracle"].passed:
            return skipped(
                "partial", "the reference solution does not pass (see oracle), so there is nothing to take away from"
            )
        result = check_partial(partial, threshold=ctx.threshold)
        result.seconds = round(partial.duration_sec or 0.0, 3)
        return result


CHECK = PartialCheck()

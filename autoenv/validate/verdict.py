"""From check results to one of three verdicts: valid, invalid, or undetermined (with the reason and what decides it).

Two different things used to read as "not valid" or "valid" alike:

* **cannot judge here**: a check failed for a reason that is this machine's, not the task's: the base image was a
  stand-in that lacks a program the run called (the real base may have it), the task may use the network and this
  sandbox had none, a package the build needs could not be reached. The task may be sound; a machine that can run
  what it needs decides it.
* **no solution**: nothing failed, but no reference solution ran (``--no-oracle``, or a dataset without
  ``solution/``): no flaw found, solvability unknown. A reference solution (or an agent that solves the task)
  decides it.

Only ``valid`` is trained on by default; ``--strict`` counts undetermined as invalid. The rules read the checks'
recorded evidence, so they apply to reports recorded before this module existed as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from autoenv.validate.checks.base import NETWORK_FAILURE, CheckResult, network_failure
from autoenv.vocab import Undecided, Verdict


class Undetermined(BaseModel):
    """Why a task could not be called valid or invalid, and what would decide it."""

    kind: Undecided
    check: str = ""
    reason: str
    decide: str

    def __str__(self) -> str:
        where = f"[{self.check}] " if self.check else ""
        return f"{where}{self.kind}: {self.reason} (to decide it: {self.decide})"


NO_SOLUTION = Undetermined(
    kind=Undecided.NO_SOLUTION,
    check="oracle",
    reason="no flaw found, solvability unknown: no reference solution ran, so nothing shows a correct answer can pass",
    decide="ship solution/solve.sh and validate without --no-oracle, or have an agent solve it (--oracle-agent)",
)


def _machine_limit(check: str, reason: str, decide: str) -> Undetermined:
    """An undetermined verdict because ``check`` failed for this machine's reason, not the task's."""
    return Undetermined(kind=Undecided.CANNOT_JUDGE, check=check, reason=reason, decide=decide)


def cannot_judge(result: CheckResult) -> Undetermined | None:
    """The reason a failed check says nothing about the task, if it is one of this machine's limits."""
    if result.passed is not False:
        return None
    evidence = result.evidence
    if result.name == "build":
        line = next((ln for ln in str(evidence.get("error") or "").splitlines() if NETWORK_FAILURE.search(ln)), None)
        if line:
            return _machine_limit(
                check="build",
                reason=f"a package the build needs could not be reached from here ({line.strip()[:200]})",
                decide="validate on a machine that reaches the package registries (or with a mirror configured)",
            )
    if result.name == "oracle":
        stand_ins = evidence.get("stand_ins") or []
        missing = evidence.get("missing_programs") or []
        if missing and stand_ins:
            return _machine_limit(
                check="oracle",
                reason=f"{', '.join(missing)} not found on a stand-in base ({'; '.join(stand_ins)}); the real base "
                "may have it",
                decide="validate with --env docker on a machine that can pull the real base image",
            )
        if "network_failure" not in evidence:  # (set when the task declares no network: then it is the task's flaw)
            line = next((ln for run in _runs(evidence) if (ln := network_failure(run))), None)
            if line:
                return _machine_limit(
                    check="oracle",
                    reason=f"the task uses the network and this sandbox had none ({line[:200]})",
                    decide="validate on a machine whose sandboxes reach the network the task names",
                )
    return None


def two_valued(data: Any) -> Any:
    """A report (or audit entry) recorded before the third verdict, as a model validator reads it: its ``valid`` is
    its verdict."""
    if isinstance(data, dict) and "verdict" not in data and "valid" in data:
        data = {**data, "verdict": Verdict.VALID if data["valid"] else Verdict.INVALID}
    return data


def _runs(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    runs = evidence.get("runs")
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


def decide(checks: Iterable[CheckResult], may_not_run: frozenset[str]) -> Verdict:
    """The verdict of a report's checks (see :func:`reasons` for an undetermined one's reasons)."""
    checks = list(checks)
    failed = [c for c in checks if c.passed is False]
    if any(cannot_judge(c) is None for c in failed):
        verdict = Verdict.INVALID
    elif failed:
        verdict = Verdict.UNDETERMINED
    elif any(c.passed is None and c.name not in may_not_run for c in checks):
        verdict = Verdict.INVALID  # a check that had to run did not (the task has no verifier to run, ...)
    elif not any(c.name == "oracle" and c.passed for c in checks):
        verdict = Verdict.UNDETERMINED
    else:
        verdict = Verdict.VALID
    return verdict


def reasons(checks: Iterable[CheckResult]) -> list[Undetermined]:
    """Why the checks leave a task undetermined: this machine's limits, else the missing solution."""
    checks = list(checks)
    found = [u for c in checks if (u := cannot_judge(c)) is not None]
    oracle = next((c for c in checks if c.name == "oracle"), None)
    if not found and not (oracle is not None and oracle.passed):
        if oracle is not None and oracle.evidence.get("unsolved"):
            agent, k = oracle.evidence.get("oracle_agent"), oracle.evidence.get("attempts")
            return [NO_SOLUTION.model_copy(update={"reason": f"unsolved in {k} tries by {agent}; no flaw found"})]
        found = [NO_SOLUTION]
    return found


__all__ = ["NO_SOLUTION", "Undetermined", "cannot_judge", "decide", "reasons", "two_valued"]

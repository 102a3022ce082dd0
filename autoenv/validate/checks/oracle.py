"""Oracle: the reference solution passes its own tests, every run."""

from __future__ import annotations

import re

from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import FIRST, Check, CheckResult, Context, Outcomes
from autoenv.validate.checks.datadiff import data_differences
from autoenv.validate.checks.evidence import describe, network_advice, network_failure, outputs_block, trial_evidence

#: How a shell, env or Python says a program (or module) is not there; group 1 is its name.
_MISSING = (
    re.compile(r"(?:^|[\s:])([\w.+-]+): command not found", re.M),
    re.compile(r"\bsh: \d+: ([\w.+-]+): not found"),
    re.compile(r"env: ['\u2018\"]?([\w.+-]+)['\u2019\"]?: No such file or directory"),
    re.compile(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([\w.+-]+)'"),
    re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'"),
)


def missing_programs(text: str) -> list[str]:
    """Programs (``file``) and Python modules (``python module yaml``) a failed run's output says are missing."""
    found: dict[str, None] = {}
    for pattern in _MISSING:
        for match in pattern.finditer(text or ""):
            name = match.group(1)
            found.setdefault(f"python module {name}" if "ModuleNotFound" in pattern.pattern else name, None)
    return list(found)


def _missing_advice(missing: list[str], stand_ins: list[str]) -> str:
    names = ", ".join(f"`{m}`" for m in missing)
    if stand_ins:
        return (
            f"The run failed on {names}, not found in the image. Its base was a stand-in here: "
            f"{'; '.join(stand_ins)}. The real base may differ from it: if the task needs {names}, install it in "
            "environment/Dockerfile (apt-get install / pip install) so that it is there on any base; to see the real "
            "image's behaviour, validate with `--env docker` on a machine that can pull it.\n"
        )
    return f"The run failed on {names}, not found in the image: install it in environment/Dockerfile.\n"


def check_oracle(outcomes: list[TrialOutcome], *, threshold: float = 1.0, offline: bool = False) -> CheckResult:
    runs = [trial_evidence(o, agent_log="oracle.txt") for o in outcomes]
    failing = [(o, e) for o, e in zip(outcomes, runs) if o.reward is None or o.reward < threshold]
    rewards = [o.reward for o in outcomes]
    if not failing:
        return CheckResult(
            name="oracle",
            passed=True,
            summary=f"reference solution passed {len(outcomes)}/{len(outcomes)} runs (rewards {rewards})",
            evidence={"rewards": rewards, "threshold": threshold, "runs": runs},
        )
    outcome, evidence = failing[0]
    network = network_advice(evidence, offline)
    if network:
        return CheckResult(
            name="oracle",
            passed=False,
            summary=f"reference solution failed {len(failing)}/{len(outcomes)} runs: grading needs the network, the "
            f"task has none",
            evidence={
                "rewards": rewards,
                "threshold": threshold,
                "runs": runs,
                "network_failure": network_failure(evidence),
            },
            feedback=network + outputs_block(evidence),
        )
    missing = missing_programs(
        "\n".join(str(e.get(k, "")) for _, e in failing for k in ("agent_output", "verifier_output"))
    )
    if missing:
        where = " on a stand-in base" if outcome.stand_ins else ""
        return CheckResult(
            name="oracle",
            passed=False,
            summary=f"reference solution failed {len(failing)}/{len(outcomes)} runs: "
            f"{', '.join(missing)} not found{where}",
            evidence={
                "rewards": rewards,
                "threshold": threshold,
                "runs": runs,
                "missing_programs": missing,
                "stand_ins": outcome.stand_ins,
            },
            feedback=_missing_advice(missing, outcome.stand_ins) + outputs_block(evidence),
        )
    return CheckResult(
        name="oracle",
        passed=False,
        summary=f"reference solution failed {len(failing)}/{len(outcomes)} runs: {describe(outcome)}",
        evidence={"rewards": rewards, "threshold": threshold, "runs": runs},
        feedback=(
            f"The reference solution (solution/solve.sh) does not pass its own tests: {len(failing)} of "
            f"{len(outcomes)} runs got "
            f"{describe(outcome)} (needs reward >= {threshold:g}). Fix the solution or the tests so that the solution "
            f"passes.\n" + outputs_block(evidence, verifier_silent_hint=True)
        ),
    )


class OracleCheck(Check):
    name = "oracle"
    stage = FIRST
    needs_oracle = True

    trials = frozenset({"oracle"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        result = check_oracle(outcomes.oracle, threshold=ctx.threshold, offline=ctx.offline)
        failed = [o for o in outcomes.oracle if o.reward is None or o.reward < ctx.threshold]
        if failed and (lines := data_differences(ctx.task_dir, failed[0].trial_dir)):
            result.evidence["data_differences"] = lines
            result.feedback = (result.feedback or result.summary) + (
                "\nData files whose bytes differ from what the tests expect:\n" + "\n".join(f"- {ln}" for ln in lines)
            )
        result.seconds = round(sum(o.duration_sec or 0.0 for o in outcomes.oracle), 3)
        return result


CHECK = OracleCheck()

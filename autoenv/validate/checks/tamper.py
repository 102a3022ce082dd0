"""Tamper: an agent that only cheats (see :mod:`autoenv.agents.adversary`) must not get the reward.

When it does, the families of cheats it applied are tried one by one (more adversary trials) to say which one
won: the fix differs for each (:data:`CHEAT_ADVICE`).
"""

from __future__ import annotations

import json
from pathlib import Path

from harbor.models.task.config import VerifierEnvironmentMode

from autoenv.agents.adversary import CHEAT_KINDS, SHARED_MODE_FAMILIES
from autoenv.taskfmt.check import Level, Problem
from autoenv.trials.attribution import ErrorKind
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import SECOND, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.evidence import describe, outputs_block, trial_evidence
from autoenv.validate.checks.shortcut_trials import run_shortcuts

#: The cheating agent, by import path (its ``cheats`` kwarg picks families).
ADVERSARY = "autoenv.agents.adversary:AdversaryAgent"


def adversary_cheats(outcome: TrialOutcome) -> list[dict[str, str]]:
    try:
        return json.loads((Path(outcome.trial_dir) / "agent" / "adversary.json").read_text())["cheats"]
    except (OSError, ValueError, KeyError):
        return []


#: What to tell a proposer when one family of cheats wins on its own.
CHEAT_ADVICE = {
    "reward": (
        "The reward itself was forged: something the agent left behind (a running process, a program earlier on PATH, "
        "an interpreter start-up hook) rewrote /logs/verifier/reward.txt/reward.json during verification, because a "
        "shared-mode verifier runs in the agent's environment. Grade in a fresh sandbox: set environment_mode = "
        '"separate" under [verifier] and artifacts = ["/app"] (the deliverables) at the top of task.toml.'
    ),
    "plant": (
        "A conftest.py or pytest.py the agent planted took over pytest: the verifier collects tests where the agent "
        "could write (/tests before the upload, the work folder, /app). Copy the task's own test files to a fresh "
        "folder and run `python3 -I -m pytest -c /dev/null --noconftest` there."
    ),
    "tests": (
        "A test file the agent could edit decided the reward: run only tests from /tests (uploaded after the agent), "
        "never test files shipped in the image."
    ),
    "outputs": (
        "The tests accept outputs that do not do the task: empty files where output is expected, or `exit 0` stubs in "
        "place of the programs to write. Check the content and behaviour of outputs, not just that files exist or "
        "that a program exits 0."
    ),
    "peek": (
        "A program the agent wrote read the expected answers while the tests ran it: the tests run the agent's program "
        "as "
        "root with the expected data readable (in /tests, or copied next to the tests). Run the agent's program as an "
        "unprivileged user that cannot read them (in Python: subprocess.run(..., user=65534, group=65534, "
        "extra_groups=[]) "
        "after `chmod -R go-rwx /tests` in test.sh, and keep copies of the tests in a folder only root can read), or "
        "run it "
        "before the expected values are put in place."
    ),
    "inject": (
        "The tests import the agent's Python code into the process that decides the reward, so that code decides it: "
        "a module that ends its importer with os._exit(0), or rewrites pytest's reports to 'passed', wins without "
        "doing the task. Call the agent's functions in a child process under another user and compare plain data in "
        "the test: copy autoenv's broker next to the tests (`autoenv.grading.AGENTCALL` -> tests/agentcall.py), run "
        "pytest through it from test.sh, and use `agentcall.agent_module('/app/pkg.py')` instead of importing; or "
        "run the agent's program as a subprocess and check its output."
    ),
    "example": (
        "The instruction's own example output, copied verbatim to the output path, passes the tests: they check the "
        "output's existence, format or types, not that it is the right answer for the task's input. Compare the "
        "output with values computed from the input (or with an expected file in tests/) that differ from the example."
    ),
    "minimal": (
        "An output of the right shape with nothing in it (the example's keys with zeros, empty lists, false, the first "
        "allowed value) passes the tests: they check format, types, bounds or that the numbers agree with each other. "
        "Check the values themselves against the right answer for the task's input."
    ),
    "positive": (
        "A report that says everything is fine (VALID / PASS / OK, true everywhere), with the output folder left "
        "empty, passes the tests: a test that loops over an empty folder checks nothing, and no test asks for a "
        "negative finding. Plant cases the report must flag, and check the number of outputs the task must produce."
    ),
    "inputs": (
        "Emptying the inputs the tests read (a CSV cut to its header) and writing minimal outputs passes the tests: "
        "they recompute the expected answer from files the agent can edit. Compute the expected values from a copy of "
        "the inputs in tests/ (uploaded after the agent), or check a checksum of the inputs, never from the agent's "
        "copy."
    ),
    "keywords": (
        "A free-text answer that names every common cause of failure at once (race condition, lock, division by "
        "zero, off-by-one, None, encoding, ...) passes the tests: they look for words in the answer, not for the "
        "cause the environment shows. Grade the effect instead (the fix makes the program pass hidden cases), or ask "
        "for the cause in a fixed form (an exception name, a line number) and reject answers that name others."
    ),
}


def check_tamper(
    outcome: TrialOutcome,
    *,
    threshold: float = 1.0,
    diagnosis: dict[str, TrialOutcome] | None = None,
    shared_only: list[str] | None = None,
    task_toml: str = "task.toml",
) -> CheckResult:
    """Judge the adversary run; ``diagnosis`` holds runs with one cheat family each, to say which one worked.

    For a shared-mode verifier, cheats that beat any verifier in the agent's sandbox (forged reward
    files, rewriters, shadowed programs, planted conftest.py, programs that write the verdict when run)
    are a limit of how the task is run, not a flaw of the task. ``shared_only`` names those families
    when the cheats aimed at the task's own tests (``tests``, ``outputs``) lost without them: the check
    then passes with a note saying so.
    """
    evidence = trial_evidence(outcome)
    cheats = adversary_cheats(outcome)
    evidence["cheats"] = cheats
    if outcome.error in (ErrorKind.BUILD, ErrorKind.INVALID_TASK):
        return CheckResult(
            name="tamper", passed=None, summary=f"adversary trial did not run: {describe(outcome)}", evidence=evidence
        )
    if outcome.reward is None or outcome.reward < threshold:
        return CheckResult(
            name="tamper",
            passed=True,
            summary=f"cheating agent ({len(cheats)} cheats) got {describe(outcome)}",
            evidence=evidence,
        )
    winners = [family for family, o in (diagnosis or {}).items() if o.reward is not None and o.reward >= threshold]
    if diagnosis:
        evidence["diagnosis"] = {
            family: trial_evidence(o) | {"cheats": adversary_cheats(o)} for family, o in diagnosis.items()
        }
    if shared_only is not None:
        evidence["verifier_mode"] = "shared"
        families = " / ".join(shared_only) or "shared-mode"
        return CheckResult(
            name="tamper",
            passed=True,
            evidence=evidence,
            summary=f"only cheats any shared-mode verifier falls to won ({families}); those aimed at this task's tests "
            f"did not",
            findings=[
                Problem(
                    path=task_toml,
                    rule="shared-verifier",
                    level=Level.NOTE,
                    message=f"the verifier runs in the agent's sandbox, so {families} cheats forge its reward "
                    "(a limit of shared mode, not of this task's tests)",
                    advice='[verifier] environment_mode = "separate" (with the deliverables as artifacts) grades in a '
                    "fresh sandbox",
                )
            ],
        )
    kinds = sorted({c["kind"] for c in cheats})
    # the cheats of the families that won alone, else all of them
    shown_cheats = [c for w in winners for c in adversary_cheats(diagnosis[w])] if winners and diagnosis else cheats
    listing = "\n".join(f"- {c['kind']}: {c['detail']}" for c in shown_cheats[:40])
    if winners:
        advice = " ".join(CHEAT_ADVICE.get(w, "") for w in winners)
        culprit = " and ".join(f"'{w}' cheats alone" for w in winners)
        summary = f"a cheating agent got reward {outcome.reward:g} ({culprit} suffice)"
        shown = trial_evidence(diagnosis[winners[0]]) if diagnosis else evidence
    else:
        advice = " ".join(CHEAT_ADVICE.values())
        summary = f"a cheating agent got reward {outcome.reward:g} without doing the task ({', '.join(kinds)})"
        shown = evidence
    return CheckResult(
        name="tamper",
        passed=False,
        summary=summary,
        evidence=evidence,
        feedback=(
            f"The verifier can be gamed: an agent that did not attempt the task and only cheated got reward "
            f"{outcome.reward:g}. "
            f"Cheats it applied:\n{listing}\n{advice}\n" + outputs_block(shown)
        ),
    )


def separate_verifier(ctx: Context) -> bool:
    verifier_cfg = ctx.task.config.verifier
    return verifier_cfg.environment_mode == VerifierEnvironmentMode.SEPARATE or (
        verifier_cfg.environment_mode is None and verifier_cfg.environment is not None
    )


async def diagnose(
    ctx: Context, adversary: TrialOutcome, separate: bool
) -> tuple[dict[str, TrialOutcome] | None, list[str] | None]:
    """Which family of cheats won alone (one adversary trial each), or, for a shared-mode verifier, the families
    any such verifier falls to when the cheats aimed at this task's tests lost without them."""
    # only families that applied a cheat are tried: one that did nothing cannot win alone
    applied = {CHEAT_KINDS.get(c["kind"]) for c in adversary_cheats(adversary)}
    families = [f for f in CHEAT_ADVICE if f in applied]
    diagnosis = None
    shared_only = None
    if not separate:
        # a shared-mode verifier falls to the harness families anyway: what matters is whether the cheats aimed
        # at this task's tests win without them (one trial), and only then which one
        families = [f for f in families if f not in SHARED_MODE_FAMILIES]
        aimed = (await ctx.run([(ADVERSARY, {"cheats": ",".join(families)})]))[0] if families else None
        if aimed is None or aimed.reward is None or aimed.reward < ctx.threshold:
            shared_only = [f for f in CHEAT_ADVICE if f in applied and f in SHARED_MODE_FAMILIES]
            families = []
        elif len(families) == 1:
            diagnosis = {families[0]: aimed}
            families = []
    if families:
        runs = await ctx.run([(ADVERSARY, {"cheats": f}) for f in families])
        diagnosis = dict(zip(families, runs))
    return diagnosis, shared_only


class TamperCheck(Check):
    name = "tamper"
    stage = SECOND

    trials = frozenset({"adversary", "nop"})

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        nop, adversary = outcomes.nop, outcomes.adversary
        assert nop is not None and adversary is not None
        separate = separate_verifier(ctx)
        diagnosis = shared_only = None
        if nop.reward is not None and nop.reward >= ctx.threshold:
            # a cheater "wins" because doing nothing wins; the nop check already says so
            result = skipped("tamper", "doing nothing already passes (see nop), so cheating proves nothing more")
        else:
            if adversary.reward is not None and adversary.reward >= ctx.threshold:
                diagnosis, shared_only = await diagnose(ctx, adversary, separate)
            result = check_tamper(
                adversary,
                threshold=ctx.threshold,
                diagnosis=diagnosis,
                shared_only=shared_only,
                task_toml=str(ctx.task_dir / "task.toml"),
            )
            if result.passed:  # the usual cheats lost: the shortcuts, one trial each
                diagnosis = await run_shortcuts(ctx)
                won = next((o for o in diagnosis.values() if o.reward is not None and o.reward >= ctx.threshold), None)
                if won is not None:
                    result = check_tamper(won, threshold=ctx.threshold, diagnosis=diagnosis)
                else:  # (in the evidence: the summary stays what it was for tasks these cheats do not beat)
                    result.evidence["shortcuts"] = {family: describe(o) for family, o in diagnosis.items()}
        diagnosed = [o for o in (diagnosis or {}).values() if o is not None]
        result.seconds = round(sum(o.duration_sec or 0.0 for o in [adversary, *diagnosed]), 3)
        if not separate and result.passed:
            # the structure check's shared-verifier note says what that means for the reward
            result.evidence["verifier_mode"] = "shared"
        return result


CHECK = TamperCheck()

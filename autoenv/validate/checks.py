"""The validation checks, one function each, each returning a :class:`CheckResult`.

A check never raises for a bad task: whatever is wrong becomes a failed result
whose ``feedback`` a task proposer (an LLM) can act on without reading our
code: it names what failed and quotes the relevant output, trimmed. Checks
take the trial outcomes they judge as arguments, so the expensive trials are
run once (in :mod:`autoenv.validate.validation`) and the judging stays pure.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from harbor.environments.definition import environment_content_hash
from harbor.models.task.task import Task
from pydantic import BaseModel, Field

from autoenv.agents.partial import created_outputs, mutated_files
from autoenv.sandbox.local.image import BUILDER_VERSION, BuildError, Image, build_image, cache_root
from autoenv.taskfmt.check import Level, Problem, check_task, errors
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.leakage import LeakFinding

CheckName = Literal["structure", "build", "oracle", "deterministic", "nop", "leakage", "tamper", "partial", "timeouts"]

#: Bumped when a check is added or judges differently: records made by older checks are not reused.
CHECKS_VERSION = 2

#: Every check, in the order they run and are reported.
CHECK_ORDER: tuple[CheckName, ...] = (
    "structure",
    "build",
    "oracle",
    "deterministic",
    "nop",
    "leakage",
    "tamper",
    "partial",
    "timeouts",
)

#: Checks that may end "not run" on a valid task: they say why in their summary and do not make the task invalid.
#: (A partial solution cannot be made of a solution that changes no file.)
MAY_NOT_RUN: frozenset[CheckName] = frozenset({"partial"})
#: The checks that need a reference solution: "not run" without one when validating with ``--no-oracle``.
NEED_ORACLE: frozenset[CheckName] = frozenset({"oracle", "deterministic", "partial", "timeouts"})

#: What a verifier prints when it needs the network and has none (DNS, connect, pip, apt, npm).
NETWORK_FAILURE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|Failed to establish a new connection|Could not connect to|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|No matching distribution found|Failed to fetch http|unable to access 'http",
    re.I,
)

TAIL_CHARS = 1500


class CheckResult(BaseModel):
    """One named verdict with the evidence behind it."""

    name: CheckName
    passed: bool | None = Field(description="True/False, or None when the check could not run (see summary)")
    summary: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    feedback: str = Field(default="", description="For a failed check: what to fix, with the relevant output")
    findings: list[Problem] = Field(
        default_factory=list, description="Findings with their level (error, warning, note) and where they are"
    )
    seconds: float = 0.0

    def at(self, level: Level) -> list[Problem]:
        return [f for f in self.findings if f.level == level]

    @property
    def status(self) -> str:
        return {True: "pass", False: "FAIL", None: "skip"}[self.passed]


def skipped(name: CheckName, reason: str) -> CheckResult:
    return CheckResult(name=name, passed=None, summary=f"not run: {reason}")


def tail(text: str | None, limit: int = TAIL_CHARS) -> str:
    """The end of an output, where errors are; marked when cut."""
    if not text:
        return ""
    text = text.strip()
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _phase_seconds(trial_dir: str, phase: str) -> float | None:
    """Duration of a trial phase (``agent_execution``, ``verifier``, ...) from Harbor's result.json."""
    try:
        data = json.loads((Path(trial_dir) / "result.json").read_text())
        timing = data.get(phase) or {}
        start, end = timing.get("started_at"), timing.get("finished_at")
        if not start or not end:
            return None
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except (OSError, ValueError, TypeError):
        return None


def trial_evidence(outcome: TrialOutcome, *, agent_log: str | None = None) -> dict[str, Any]:
    """What a reader needs from one trial: verdict, error, and the ends of its outputs."""
    evidence: dict[str, Any] = {
        "reward": outcome.reward,
        "error": outcome.error,
        "trial_dir": outcome.trial_dir,
        "seconds": outcome.duration_sec,
    }
    if outcome.error_message:
        evidence["error_message"] = tail(outcome.error_message, 800)
    if outcome.trial_dir:
        verifier_out = tail(_read(Path(outcome.trial_dir) / "verifier" / "test-stdout.txt"))
        if verifier_out:
            evidence["verifier_output"] = verifier_out
        if agent_log:
            agent_out = tail(_read(Path(outcome.trial_dir) / "agent" / agent_log))
            if agent_out:
                evidence["agent_output"] = agent_out
            exit_code = _read(Path(outcome.trial_dir) / "agent" / "exit-code.txt").strip()
            if exit_code:
                evidence["agent_exit_code"] = exit_code
    return evidence


def _first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _describe(outcome: TrialOutcome) -> str:
    if outcome.error:
        return f"error {outcome.error}" + (f" ({_first_line(outcome.error_message)})" if outcome.error_message else "")
    return f"reward {outcome.reward:g}" if outcome.reward is not None else "no reward"


def network_failure(evidence: dict[str, Any]) -> str | None:
    """The line of a trial's output that shows it needed the network and had none, if any."""
    for key in ("verifier_output", "agent_output", "error_message"):
        for line in str(evidence.get(key) or "").splitlines():
            if NETWORK_FAILURE.search(line):
                return line.strip()[:300]
    return None


def _network_advice(evidence: dict[str, Any], offline: bool) -> str:
    line = network_failure(evidence)
    if not line or not offline:
        return ""
    if line in str(evidence.get("verifier_output") or ""):
        return (
            f'This is not a wrong solution: the verifier needs the network at grading time ("{line}"), and the task '
            'declares network_mode = "no-network". Install what tests/test.sh downloads (pytest, uv, curl, packages) '
            "in environment/Dockerfile instead of at grading time.\n"
        )
    return (
        f'solution/solve.sh needs the network ("{line}"), and the task declares network_mode = "no-network": the '
        "agent has none either. Install what it downloads in environment/Dockerfile, or solve the task without it.\n"
    )


def _outputs_block(evidence: dict[str, Any], *, verifier_silent_hint: bool = False) -> str:
    parts = []
    if verifier_silent_hint and not evidence.get("verifier_output") and evidence.get("trial_dir"):
        parts.append(
            "tests/test.sh printed nothing; make it print what it checks and why a check fails, so failures can be "
            "diagnosed."
        )
    if evidence.get("agent_output"):
        parts.append(f"Output of solution/solve.sh:\n{evidence['agent_output']}")
    if evidence.get("agent_exit_code"):
        parts.append(f"solve.sh exit code: {evidence['agent_exit_code']}")
    if evidence.get("verifier_output"):
        parts.append(f"Output of tests/test.sh:\n{evidence['verifier_output']}")
    if evidence.get("error_message"):
        parts.append(f"Harbor error: {evidence['error_message']}")
    return "\n".join(parts)


# -- 1. structure -------------------------------------------------------------------


def _count(problems: list[Problem]) -> str:
    counts = [f"{n} {level}(s)" for level in Level if (n := sum(p.level == level for p in problems))]
    return ", ".join(counts)


def check_structure(task_dir: Path, *, env: str = "local", oracle: bool = True, strict: bool = False) -> CheckResult:
    """Harbor's lint and autoenv's static checks; only errors (and warnings when ``strict``) fail it."""
    started = time.monotonic()
    problems = check_task(task_dir, env=env, oracle=oracle)
    seconds = round(time.monotonic() - started, 3)
    failing = errors(problems, strict=strict)
    evidence = {"problems": [p.model_dump(mode="json") for p in problems]}
    if not failing:
        summary = "task check: well formed" + (f" ({_count(problems)})" if problems else "")
        return CheckResult(
            name="structure", passed=True, summary=summary, seconds=seconds, evidence=evidence, findings=problems
        )
    listing = "\n".join(str(p) for p in failing[:20])
    return CheckResult(
        name="structure",
        passed=False,
        seconds=seconds,
        findings=problems,
        summary=f"{_count(problems)} found by `autoenv task check`" + (" (warnings count: --strict)" if strict else ""),
        evidence=evidence,
        feedback=f"The task is not well formed (`autoenv task check`):\n{listing}",
    )


# -- 2. build -----------------------------------------------------------------------


async def check_build_local(task_dir: Path, *, force: bool = False) -> tuple[CheckResult, Image | None]:
    """Build (or reuse) the local image within the task's build_timeout_sec."""
    task = Task(task_dir)
    env_cfg = task.config.environment
    env_dir = task.paths.environment_dir
    key = environment_content_hash(env_dir, docker_image=env_cfg.docker_image)
    started = time.monotonic()
    cached = (Path(_image_dir_for(key)) / "image.json").exists() and not force
    try:
        image = await build_image(
            env_dir, key=key, docker_image=env_cfg.docker_image, timeout_sec=env_cfg.build_timeout_sec, force=force
        )
    except BuildError as exc:
        seconds = round(time.monotonic() - started, 3)
        message = str(exc)
        return CheckResult(
            name="build",
            passed=False,
            seconds=seconds,
            summary=f"environment failed to build: {message.splitlines()[0][:200]}",
            evidence={"error": tail(message), "build_timeout_sec": env_cfg.build_timeout_sec},
            feedback=f"environment/Dockerfile does not build (local backend):\n{tail(message)}",
        ), None
    seconds = round(time.monotonic() - started, 3)
    return CheckResult(
        name="build",
        passed=True,
        seconds=seconds,
        summary=f"built in {seconds:.1f}s"
        + (" (cached image)" if cached else "")
        + f", limit {env_cfg.build_timeout_sec:g}s",
        evidence={"image": str(image.directory), "cached": cached, "build_timeout_sec": env_cfg.build_timeout_sec},
    ), image


def _image_dir_for(key: str) -> Path:
    return cache_root() / "images" / f"{key}-v{BUILDER_VERSION}"


def check_build_from_trials(outcomes: list[TrialOutcome], build_timeout_sec: float) -> CheckResult:
    """Non-local backends build inside the trial: judge the build from the trials' errors."""
    failed = [o for o in outcomes if o.error == "build"]
    setup = [s for o in outcomes if o.trial_dir and (s := _phase_seconds(o.trial_dir, "environment_setup")) is not None]
    if failed:
        message = failed[0].error_message or "build failed"
        return CheckResult(
            name="build",
            passed=False,
            summary=f"environment failed to build: {message.splitlines()[0][:200]}",
            evidence={"error": tail(message), "trial_dir": failed[0].trial_dir},
            feedback=f"environment/Dockerfile does not build:\n{tail(message)}",
        )
    longest = max(setup, default=0.0)
    return CheckResult(
        name="build",
        passed=True,
        summary=f"environment started in at most {longest:.1f}s (limit {build_timeout_sec:g}s)",
        evidence={"environment_setup_sec": setup},
    )


# -- 3. oracle passes, deterministically ----------------------------------------------


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
    network = _network_advice(evidence, offline)
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
            feedback=network + _outputs_block(evidence),
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
            feedback=_missing_advice(missing, outcome.stand_ins) + _outputs_block(evidence),
        )
    return CheckResult(
        name="oracle",
        passed=False,
        summary=f"reference solution failed {len(failing)}/{len(outcomes)} runs: {_describe(outcome)}",
        evidence={"rewards": rewards, "threshold": threshold, "runs": runs},
        feedback=(
            f"The reference solution (solution/solve.sh) does not pass its own tests: {len(failing)} of "
            f"{len(outcomes)} runs got "
            f"{_describe(outcome)} (needs reward >= {threshold:g}). Fix the solution or the tests so that the solution "
            f"passes.\n" + _outputs_block(evidence, verifier_silent_hint=True)
        ),
    )


def check_deterministic(outcomes: list[TrialOutcome]) -> CheckResult:
    verdicts = [(None if o.reward is None else round(o.reward, 6), o.error) for o in outcomes]
    rewards = [o.reward for o in outcomes]
    if len(set(verdicts)) <= 1:
        return CheckResult(
            name="deterministic",
            passed=True,
            summary=f"{len(outcomes)} oracle runs agree ({_describe(outcomes[0])})" if outcomes else "no runs",
            evidence={"rewards": rewards},
        )
    first = outcomes[0]
    other = next(o for o in outcomes if (None if o.reward is None else round(o.reward, 6), o.error) != verdicts[0])
    a, b = trial_evidence(first, agent_log="oracle.txt"), trial_evidence(other, agent_log="oracle.txt")
    return CheckResult(
        name="deterministic",
        passed=False,
        summary=f"the same solution got different verdicts: {', '.join(_describe(o) for o in outcomes)}",
        evidence={"rewards": rewards, "errors": [o.error for o in outcomes], "runs": [a, b]},
        feedback=(
            "The verdict is not deterministic: the reference solution, run "
            f"{len(outcomes)} times in identical fresh environments, got {', '.join(_describe(o) for o in outcomes)}. "
            "Remove randomness, timing, network or other external dependencies from the tests and the solution.\n"
            f"Run with {_describe(first)}:\n{_outputs_block(a)}\n\nRun with {_describe(other)}:\n{_outputs_block(b)}"
        ),
    )


# -- 4. null agent fails ------------------------------------------------------------


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
                "The tests must fail on the untouched environment.\n" + _outputs_block(evidence)
            ),
        )
    return CheckResult(
        name="nop",
        passed=False,
        summary=f"on the untouched environment the verifier produced {_describe(outcome)}, not reward 0",
        evidence=evidence,
        feedback=_network_advice(evidence, offline)
        + (
            f"On the untouched environment the verifier ended with {_describe(outcome)} instead of writing reward 0. "
            "tests/test.sh must always write /logs/verifier/reward.txt (0 on failure), also when expected files are "
            "missing.\n" + _outputs_block(evidence)
        ),
    )


# -- 5. leakage ---------------------------------------------------------------------


def check_leakage(
    image_findings: list[LeakFinding] | None,
    instruction_findings: list[LeakFinding],
    *,
    image_note: str = "",
    task_dir: Path | None = None,
) -> CheckResult:
    """Combine image and instruction findings; ``image_findings`` None means the image was not scanned.

    Warning-level findings (a worked example that states a small share of what the tests check) are reported
    as the check's findings and do not fail it.
    """
    every = list(instruction_findings) + list(image_findings or [])
    evidence: dict[str, Any] = {
        "findings": [f.model_dump() for f in every],
        "image_scanned": image_findings is not None,
    }
    if image_note:
        evidence["image_note"] = image_note
    instruction = str((task_dir / "instruction.md") if task_dir else "instruction.md")
    warnings = [
        Problem(
            path=instruction,
            message=f.detail,
            rule="autoenv-worked-example",
            level=Level.WARNING,
            advice="fine as a worked example; keep the stated values a small part of what the tests check (more "
            "hidden cases, other inputs), or state how to check a result instead of the result",
        )
        for f in every
        if f.level == "warning"
    ]
    findings = [f for f in every if f.level != "warning"]
    if not findings:
        if image_findings is None:
            return CheckResult(
                name="leakage",
                passed=None,
                summary=f"instruction clean; image not scanned ({image_note or 'no image'})",
                evidence=evidence,
                findings=warnings,
            )
        return CheckResult(
            name="leakage",
            passed=True,
            summary="no solution, tests or expected answers visible to the agent"
            + (f" ({len(warnings)} warning(s): a worked example in the instruction)" if warnings else ""),
            evidence=evidence,
            findings=warnings,
        )
    lines = "\n".join(f"- {f}" for f in findings[:15])
    kinds = sorted({f.kind for f in findings})
    advice = []
    if any(k.endswith("_in_image") and not k.startswith("expected_") for k in kinds):
        advice.append(
            "Do not COPY solution or test files (or their contents) into the environment; Harbor uploads tests/ only "
            "after the agent finishes."
        )
    if any(k.startswith("expected_") for k in kinds):
        advice.append(
            "Keep the expected values out of every file the agent can read (logs, caches, dot-folders, archives): "
            "ship only the inputs, and compute the answers in the tests or put them in tests/."
        )
    if any(k.endswith("_in_instruction") for k in kinds):
        advice.append(
            "Do not state the expected results (or the solution) in instruction.md; describe what to compute, not the "
            "result."
        )
    return CheckResult(
        name="leakage",
        passed=False,
        summary=f"{len(findings)} leak(s): {', '.join(kinds)}",
        evidence=evidence,
        feedback="The agent can see what it is supposed to produce:\n" + lines + "\n" + " ".join(advice),
        findings=warnings,
    )


def warnings_count(result: CheckResult) -> CheckResult:
    """``--strict`` for a behavioural check: a passing check with warnings fails, saying which."""
    warned = result.at(Level.WARNING)
    if result.passed is not True or not warned:
        return result
    return result.model_copy(
        update={
            "passed": False,
            "summary": f"{len(warned)} warning(s), counted as errors under --strict",
            "feedback": "\n".join(f"- {w}" for w in warned),
        }
    )


# -- 6. tamper-proof verifier ----------------------------------------------------------


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
    if outcome.error in ("build", "invalid_task"):
        return CheckResult(
            name="tamper", passed=None, summary=f"adversary trial did not run: {_describe(outcome)}", evidence=evidence
        )
    if outcome.reward is None or outcome.reward < threshold:
        return CheckResult(
            name="tamper",
            passed=True,
            summary=f"cheating agent ({len(cheats)} cheats) got {_describe(outcome)}",
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
            f"Cheats it applied:\n{listing}\n{advice}\n" + _outputs_block(shown)
        ),
    )


# -- 7. partial solutions fail -------------------------------------------------------


def check_partial(outcome: TrialOutcome, *, threshold: float = 1.0) -> CheckResult:
    """Judge a partial-solution trial: the reference solution with its outputs cut in half must fail."""
    evidence = trial_evidence(outcome, agent_log="oracle.txt")
    mutated = mutated_files(outcome.trial_dir) if outcome.trial_dir else None
    evidence["mutated"] = mutated
    if outcome.error in ("build", "invalid_task", "sandbox") or mutated is None:
        return CheckResult(
            name="partial",
            passed=None,
            evidence=evidence,
            summary=f"partial-solution trial did not run: {_describe(outcome)}",
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
            summary=f"a partial solution ({len(mutated)} output(s) cut in half) got {_describe(outcome)}",
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
            f"Files damaged:\n{listing}\n" + _outputs_block(evidence)
        ),
    )


# -- 8. timeouts --------------------------------------------------------------------


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
        if (s := o.agent_sec if o.agent_sec is not None else _phase_seconds(o.trial_dir, "agent_execution")) is not None
    ]
    verifier_secs = [s for o in oracle if o.trial_dir and (s := _phase_seconds(o.trial_dir, "verifier")) is not None]
    timed_out = [o for o in oracle if o.error in ("agent_timeout", "verifier_timeout")]
    evidence = {
        "oracle_agent_sec": agent_secs,
        "verifier_sec": verifier_secs,
        "agent_timeout_sec": agent_timeout_sec,
        "verifier_timeout_sec": verifier_timeout_sec,
        "margin": margin,
    }
    problems = []
    if timed_out:
        problems.append(f"the oracle run hit {timed_out[0].error} ({_first_line(timed_out[0].error_message)})")
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

"""AutoEnvScaling's agentic proposer: a terminal agent in its own sandbox with its workspace.

The proposer is autoenv's :class:`~autoenv.agents.terminal.TerminalAgent`,
run by Harbor's ``Trial`` on a small "proposer task" whose sandbox holds a
copy of the workspace at ``/workspace`` (skills, tools, memory, tasks, the seed
case and the format spec). It designs a task there with ordinary commands and
file writes, and it builds and tests it in *child* sandboxes through one
extra command, ``autoenv-child``:

    autoenv-child validate tasks/NAME     full validation in separate sandboxes
    autoenv-child solve tasks/NAME -k 4   K solver rollouts: pass rate, verdict, each rollout's end
    autoenv-child check tasks/NAME        the static format check only

The agent loop runs on the host and reaches the sandbox only through
``environment.exec``; :class:`ServedEnvironment` sits in that path and serves
an ``autoenv-child`` command line itself: it copies the task folder out of
the proposer's sandbox, runs the real validator/calibrator on it (each trial a
fresh sandbox of its own) and returns their report as the command's output.
Inside the sandbox a stub of the same name explains this if it is called
from a pipeline or a script. When the episode ends, the sandbox's skills,
tools, memory and tasks are copied back to the host workspace.

With ``--policy scripted`` the decisions come from :class:`ScriptedAgenticPolicy`:
the template proposer acting through the same tools (write the files,
validate in a child sandbox, read the feedback, repair, run the solver).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
import shutil
import tempfile
import textwrap
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.models.agent.context import AgentContext
from pydantic import BaseModel, Field

from autoenv.agents.policies.actions import FinishAction, ReadFileAction, RunAction
from autoenv.agents.policies.base import ActionResult, Conversation, Policy, PolicyError
from autoenv.agents.policies.plans import PlanPolicy
from autoenv.agents.policies.recipes import Plan
from autoenv.agents.terminal import TerminalAgent, TerminalAgentOptions
from autoenv.families.base import slug, write_files
from autoenv.proposer.actions import classify_tool_call, describe_tool_call
from autoenv.proposer.episode import write_actions
from autoenv.proposer.fixer import repair
from autoenv.proposer.models import ProposeOptions, ProposerAction, SeedCase
from autoenv.proposer.scripted import ScriptedProposer
from autoenv.proposer.workspace import Workspace, mirror_task
from autoenv.vocab import ProposerPolicy, SolverPolicy

SANDBOX_ROOT = "/workspace"
#: Errors that mean no reply could be had from the model (see autoenv.agents.policies.base).
INFRA_ERRORS = {"PolicyError", "PolicyConfigError", "PolicyAuthError", "PolicyConnectionError", "PolicyEndpointError"}
#: Exceptions that mean our harness broke, not that the proposer wrote a bad task.
BUG_ERRORS = {
    "TypeError",
    "AttributeError",
    "NameError",
    "KeyError",
    "IndexError",
    "AssertionError",
    "ImportError",
    "ModuleNotFoundError",
    "UnboundLocalError",
    "ZeroDivisionError",
}
CHILD = "autoenv-child"
CHILD_STUB = f"""#!/bin/sh
echo "{CHILD} is served by the proposer harness, which runs it in separate sandboxes." >&2
echo "Run it as a command of its own, e.g.: {CHILD} validate tasks/NAME   or   {CHILD} solve tasks/NAME -k 4" >&2
echo "(not inside a pipeline, a subshell or a script)." >&2
exit 2
"""
#: ``[cd DIR &&] autoenv-child ARGS [| ...]``: what the harness serves.
CHILD_LINE = re.compile(
    rf"^\s*(?:cd\s+(?P<cd>\S+)\s*&&\s*)?{CHILD}(?P<args>(?:\s+[^|;&<>`$()]+)?)\s*(?P<rest>\|.*)?$", re.S
)


class AgenticJob(BaseModel):
    """Everything the proposer agent needs that Harbor's agent kwargs cannot carry (written as JSON)."""

    case: SeedCase
    workspace: str
    attempt: int
    task_name: str
    options: ProposeOptions
    trials_dir: str
    result_file: str


class ChildCall(BaseModel):
    command: str
    verb: str
    task: str | None = None
    ok: bool | None = None
    verdict: str = ""
    seconds: float = 0.0
    started: float = 0.0


class AgenticResult(BaseModel):
    """What the episode left for the harness: the task it points at and its child-sandbox calls."""

    final_task: str | None = None
    finish_message: str | None = None
    changed_tasks: list[str] = Field(default_factory=list)
    child_calls: list[ChildCall] = Field(default_factory=list)
    error: str | None = None


# -- serving autoenv-child ---------------------------------------------------------------


class ChildServer:
    """Runs ``autoenv-child`` requests on the host against a copy of the task taken out of the sandbox."""

    def __init__(self, job: AgenticJob):
        self.job = job
        self.workspace = Workspace(job.workspace)
        self.calls: list[ChildCall] = []

    async def serve(self, environment: BaseEnvironment, match: re.Match[str]) -> ExecResult:
        started = time.monotonic()
        args = shlex.split(match.group("args") or "")
        cwd = match.group("cd") or SANDBOX_ROOT
        call = ChildCall(command=match.group(0).strip()[:300], verb=args[0] if args else "help", started=time.time())
        try:
            text, ok = await self._dispatch(environment, args, cwd, call)
        except Exception as exc:  # noqa: BLE001 - a harness failure is shown to the proposer, not raised into its episode
            text, ok = f"{CHILD}: internal error: {type(exc).__name__}: {exc}", None
        if match.group("rest"):
            text += (
                f"\n[note: the pipeline after {CHILD} ({match.group('rest').strip()[:60]}) was not run; {CHILD} prints "
                f"its report in full]"
            )
        call.ok, call.seconds = ok, round(time.monotonic() - started, 3)
        self.calls.append(call)
        return ExecResult(stdout=text.rstrip() + "\n", stderr="", return_code=0 if ok else (1 if ok is False else 2))

    async def _dispatch(
        self, environment: BaseEnvironment, args: list[str], cwd: str, call: ChildCall
    ) -> tuple[str, bool | None]:
        if not args or args[0] in ("help", "-h", "--help"):
            return self.usage(), True
        verb, rest = args[0], args[1:]
        if verb not in ("validate", "solve", "check"):
            return f"{CHILD}: unknown command {verb!r}\n{self.usage()}", None
        k = self.job.options.rollouts
        paths = []
        i = 0
        while i < len(rest):
            if rest[i] in ("-k", "--rollouts") and i + 1 < len(rest):
                k = max(1, min(16, int(rest[i + 1])))
                i += 2
                continue
            paths.append(rest[i])
            i += 1
        if len(paths) != 1:
            return f"{CHILD} {verb}: expected one task folder, e.g. {CHILD} {verb} tasks/NAME", None
        sandbox_path = posixpath.normpath(posixpath.join(cwd, paths[0]))
        if not sandbox_path.startswith(f"{SANDBOX_ROOT}/tasks/") or sandbox_path.count("/") != 3:
            return f"{CHILD} {verb}: {paths[0]}: give a task folder directly under {SANDBOX_ROOT}/tasks/", None
        name = posixpath.basename(sandbox_path)
        call.task = name
        host_task = await self.fetch(environment, sandbox_path, name)
        if host_task is None:
            return (
                f"{CHILD} {verb}: {paths[0]}: no such task folder in the sandbox (expected {sandbox_path}/task.toml)",
                None,
            )
        if verb == "check":
            from autoenv.taskfmt.check import check_task, errors

            problems = check_task(host_task, env=self.job.options.env)
            ok = not errors(problems)
            call.verdict = "well formed" if ok else f"{len(errors(problems))} error(s)"
            listing = "\n".join(str(p).replace(str(host_task), f"tasks/{name}") for p in problems)
            return (("OK: well formed" + (f"\n{listing}" if listing else "")) if ok else "PROBLEMS:\n" + listing), ok
        if verb == "validate":
            return await self._validate(host_task, call)
        return await self._solve(host_task, k, call)

    def usage(self) -> str:
        return textwrap.dedent(f"""\
            usage: {CHILD} validate tasks/NAME       validate the task in separate sandboxes (every check, with what to fix)
                   {CHILD} solve tasks/NAME [-k K]   run K rollouts of the current solver (default {self.job.options.rollouts})
                   {CHILD} check tasks/NAME          static format check only""")  # noqa: E501

    async def fetch(self, environment: BaseEnvironment, sandbox_path: str, name: str) -> Path | None:
        """Copy ``tasks/NAME`` out of the sandbox into the host workspace (replacing the older copy)."""
        probe = await environment.exec(f"test -f {shlex.quote(sandbox_path)}/task.toml", timeout_sec=30)
        if probe.return_code != 0:
            return None
        with tempfile.TemporaryDirectory(dir=self.workspace.root) as tmp:
            staged = Path(tmp) / name
            await environment.download_dir(sandbox_path, staged)
            return mirror_task(staged, self.workspace.tasks / name)

    async def _validate(self, task: Path, call: ChildCall) -> tuple[str, bool]:
        from autoenv.taskfmt.check import Level
        from autoenv.validate.validation import avalidate_task

        report = await avalidate_task(task, env=self.job.options.env, trials_dir=Path(self.job.trials_dir) / "validate")
        call.verdict = "valid" if report.valid else "invalid: " + ", ".join(c.name for c in report.failed)
        head = (
            f"VALID: all checks passed (tasks/{task.name})"
            if report.valid
            else f"INVALID: failed checks: {', '.join(c.name for c in report.failed)} (tasks/{task.name})"
        )
        lines = [
            head + (" [cached verdict for identical content]" if report.cached else f" in {report.duration_sec:.1f}s"),
            "",
        ]
        lines += [f"  {c.name:13s} {c.status:4s}  {c.summary}" for c in report.checks]
        if not report.valid or report.findings(Level.WARNING) or report.findings(Level.NOTE):
            lines += ["", report.feedback()]  # errors first, then warnings and notes, each with its level
        return "\n".join(lines), report.valid

    async def _solve(self, task: Path, k: int, call: ChildCall) -> tuple[str, bool]:
        from autoenv.validate.calibration import acalibrate

        report = await acalibrate(
            task,
            solver=self.job.options.solver_spec,
            rollouts=k,
            env=self.job.options.env,
            seed=self.job.options.seed,
            trials_dir=Path(self.job.trials_dir) / "calibrate",
        )
        call.verdict = report.verdict
        rate = "n/a" if report.pass_rate is None else f"{report.pass_rate:.2f}"
        lines = [
            f"{'ACCEPTED' if report.accepted else 'REJECTED'}: {report.verdict} "
            f"(solver {self.job.options.solver_spec}, pass rate {rate}, "
            f"95% CI {report.ci_low:.2f}-{report.ci_high:.2f})",
            "",
        ]
        for i, r in enumerate(report.rollouts, 1):
            lines.append(
                f"rollout {i}: reward {r.reward}"
                + (f", error {r.error}" if r.error else "")
                + (f", {r.n_turns} turns" if r.n_turns is not None else "")
                + f", {r.seconds:.1f}s"
            )
            lines += [f"    {line}" for line in rollout_summary(r.trial_dir)]
        return "\n".join(lines), report.accepted


def rollout_summary(trial_dir: str, limit: int = 6) -> list[str]:
    """The end of a solver rollout as the proposer should see it: its last message and the verifier's verdict lines."""
    out: list[str] = []
    root = Path(trial_dir) if trial_dir else None
    if root is None or not root.is_dir():
        return out
    try:
        steps = json.loads((root / "agent" / "trajectory.json").read_text()).get("steps", [])
        messages = [s.get("message") for s in steps if s.get("source") == "agent" and s.get("message")]
        finishes = [
            c.get("arguments", {}).get("message")
            for s in steps
            for c in (s.get("tool_calls") or [])
            if c.get("function_name") == "finish"
        ]
        if finishes and finishes[-1]:
            out.append(f"solver finished: {str(finishes[-1])[:200]}")
        elif messages:
            out.append(f"solver's last note: {str(messages[-1])[:200]}")
    except (OSError, ValueError):
        pass
    try:
        verifier = (root / "verifier" / "test-stdout.txt").read_text(errors="replace").strip().splitlines()
        tail = [line for line in verifier if line.startswith(("FAILED", "PASSED", "FAIL", "E  ", "PASS"))][
            -limit:
        ] or verifier[-3:]
        out += [f"verifier: {line[:200]}" for line in tail]
    except OSError:
        pass
    return out


class ServedEnvironment:
    """The proposer's sandbox as its agent sees it: every exec goes through, except ``autoenv-child``."""

    def __init__(self, inner: BaseEnvironment, server: ChildServer):
        self._inner = inner
        self._server = server

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def exec(self, command: str, **options: Any) -> ExecResult:
        """A lone ``autoenv-child`` command is served on the host; anything else runs in the sandbox as it is."""
        body = command[len("exec 2>&1\n") :] if command.startswith("exec 2>&1\n") else command
        match = CHILD_LINE.match(body)
        if match and "\n" not in body.strip():
            return await self._server.serve(self._inner, match)
        return await self._inner.exec(command, **options)


# -- the agent ---------------------------------------------------------------------------


class ProposerAgentOptions(TerminalAgentOptions):
    job: str = Field(description="Path of the AgenticJob JSON on the host.")
    max_turns: int = Field(default=40, ge=1, description="Policy replies per episode.")
    command_timeout_sec: float = Field(default=300.0, gt=0, description="Limit for one action.")


class ProposerAgent(TerminalAgent):
    """The terminal agent, with the workspace uploaded and ``autoenv-child`` served."""

    options_model = ProposerAgentOptions
    options: ProposerAgentOptions

    @staticmethod
    def name() -> str:
        return "autoenv-proposer"

    def _job(self) -> AgenticJob:
        return AgenticJob.model_validate_json(Path(self.options.job).read_text())

    def _make_policy(self) -> Policy:
        job = self._job()
        if self.options.policy == ProposerPolicy.SCRIPTED:
            return ScriptedAgenticPolicy(job)
        return super()._make_policy()

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        job = self._job()
        workspace = Workspace(job.workspace)
        server = ChildServer(job)
        result = AgenticResult()
        await _upload_workspace(environment, workspace)
        before = await _task_hashes(environment)
        try:
            await super().run(instruction, ServedEnvironment(environment, server), context)  # type: ignore[arg-type]
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            try:
                after = await _task_hashes(environment)
                result.changed_tasks = [name for name, h in after.items() if before.get(name) != h]
                await _download_workspace(environment, workspace, job.attempt)
            except Exception as exc:  # noqa: BLE001 - the sandbox may be gone after a timeout
                result.error = (result.error or "") + f"; workspace not copied back: {exc}"
            result.child_calls = server.calls
            result.finish_message = (context.metadata or {}).get("finish_message")
            result.final_task = pick_final_task(result, job.task_name)
            Path(job.result_file).write_text(result.model_dump_json(indent=2))


async def _upload_workspace(environment: BaseEnvironment, workspace: Workspace) -> None:
    await environment.exec(f"mkdir -p {SANDBOX_ROOT}", timeout_sec=30)
    for entry in workspace.files_for_sandbox():
        target = f"{SANDBOX_ROOT}/{entry.name}"
        if entry.is_dir():
            await environment.upload_dir(entry, target)
        else:
            await environment.upload_file(entry, target)
    # our own records of child verdicts are host bookkeeping, not the proposer's files
    stub = shlex.quote(CHILD_STUB)
    await environment.exec(
        f"find {SANDBOX_ROOT}/tasks -name .autoenv -type d -prune -exec rm -rf {{}} + ; "
        f"mkdir -p /usr/local/bin && printf '%s' {stub} > /usr/local/bin/{CHILD} && chmod +x /usr/local/bin/{CHILD}",
        timeout_sec=60,
        user="root",
    )


async def _task_hashes(environment: BaseEnvironment) -> dict[str, str]:
    res = await environment.exec(
        f"cd {SANDBOX_ROOT}/tasks 2>/dev/null && for d in */; do d=${{d%/}}; "
        '[ -f "$d/task.toml" ] && printf \'%s %s\\n\' "$d" "$(find "$d" -type f -not -path \'*/.autoenv/*\' -print0 | '
        'sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"; done; true',
        timeout_sec=60,
    )
    out = {}
    for line in (res.stdout or "").splitlines():
        name, _, digest = line.partition(" ")
        if name and digest:
            out[name] = digest
    return out


async def _download_workspace(environment: BaseEnvironment, workspace: Workspace, attempt: int) -> None:
    staging = workspace.root / ".proposer" / f"staging-{attempt}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    # everything the proposer keeps in its workspace comes back (a generator script its lessons point to, notes,
    # a data folder), except the inputs the harness rewrites each attempt and hidden names (host bookkeeping)
    listing = await environment.exec(
        f'cd {SANDBOX_ROOT} && for e in * ; do [ -d "$e" ] && echo "d $e" || {{ [ -f "$e" ] && echo "f $e"; }}; done',
        timeout_sec=60,
    )
    for line in (listing.stdout or "").splitlines():
        kind, _, name = line.partition(" ")
        if not name or name in Workspace.INPUTS or "/" in name or name.startswith("."):
            continue
        try:
            if kind == "d":
                await environment.download_dir(f"{SANDBOX_ROOT}/{name}", staging / name)
            elif kind == "f":
                await environment.download_file(f"{SANDBOX_ROOT}/{name}", staging / name)
        except FileNotFoundError:
            continue
    workspace.sync_from(staging)
    shutil.rmtree(staging, ignore_errors=True)


def pick_final_task(result: AgenticResult, expected: str) -> str | None:
    """The task the episode produced: the one its finish message names, else the last one it validated or changed."""
    candidates = list(dict.fromkeys(result.changed_tasks + [c.task for c in result.child_calls if c.task]))
    message = result.finish_message or ""
    for name in sorted(candidates, key=len, reverse=True):
        if name in message:
            return name
    validated = [c.task for c in result.child_calls if c.task and c.verb in ("validate", "solve")]
    if validated:
        return validated[-1]
    if expected in result.changed_tasks:
        return expected
    return result.changed_tasks[-1] if result.changed_tasks else None


# -- the scripted proposer, acting through tools ---------------------------------------------


Episode = Generator[Plan, list[ActionResult], None]


class ScriptedAgenticPolicy(PlanPolicy):
    """The template proposer as a terminal-agent policy: every step is a real tool call in the sandbox."""

    name = "scripted"
    policy_version = "scripted-proposer-1"
    finished_message = "done"
    exhausted_message = "Nothing left to do."

    def __init__(self, job: AgenticJob):
        super().__init__()
        self.job = job
        self.proposer = ScriptedProposer(
            seed=job.options.seed, flaw_rate=job.options.flaw_rate, workspace=Workspace(job.workspace)
        )

    def start(self, conversation: Conversation) -> Episode:
        return self._play()

    def _play(self) -> Episode:
        case, job = self.job.case, self.job
        yield Plan(
            [RunAction(command="cat seed_case.yaml && ls skills tools memory tasks | head -50")],
            "Read the seed case and see what the workspace holds.",
        )
        yield Plan(
            [
                ReadFileAction(path="skills/writing-tasks.md"),
                ReadFileAction(path="skills/fixing-feedback.md"),
                RunAction(command="tail -n 20 memory/lessons.md"),
            ],
            "Read my skills and what earlier validations taught me.",
        )
        family = self.proposer.family(case)
        draft = self.proposer.draft(case, job.attempt)
        rounds, variant = 0, 0
        while True:
            base = f"tasks/{draft.name}"
            folders = sorted({posixpath.dirname(f"{base}/{rel}") for rel in draft.files})
            yield Plan(
                [RunAction(command="mkdir -p " + " ".join(shlex.quote(f) for f in folders))],
                f"Lay out {base} for a {family.name} task ({family.description}).",
                {"task": draft.name},
            )
            yield Plan(
                [a for rel, data in sorted(draft.files.items()) for a in write_actions(f"{base}/{rel}", data)],
                f"Write the task: {draft.summary()}.",
            )
            yield Plan(
                [
                    RunAction(
                        command=f"chmod +x {base}/solution/solve.sh {base}/tests/test.sh && python3 "
                        f"tools/check_task.py {base}"
                    )
                ],
                "Make the scripts executable and run the static pre-flight check.",
            )
            files: dict[str, str | bytes] = dict(draft.files)
            while True:
                rounds += 1
                results = yield Plan([RunAction(command=f"{CHILD} validate {base}")], "Validate it in a child sandbox.")
                output = results[0].output if results else ""
                if output.startswith("VALID"):
                    break
                if rounds >= job.options.max_rounds:
                    yield Plan(
                        [FinishAction(message=f"{base}: still invalid after {rounds} validation rounds")],
                        "Out of rounds.",
                    )
                    return
                files, writes, deletes, fixes = _repair_files(files, output)
                if not fixes:
                    yield Plan(
                        [FinishAction(message=f"{base}: I cannot tell how to fix what validation reports")],
                        "No repair applies.",
                    )
                    return
                actions: list[Any] = [
                    a for rel, data in sorted(writes.items()) for a in write_actions(f"{base}/{rel}", data)
                ]
                if deletes:
                    actions.append(
                        RunAction(command="rm -f " + " ".join(shlex.quote(f"{base}/{rel}") for rel in deletes))
                    )
                yield Plan(actions, "Repair what the feedback names: " + "; ".join(fixes), {"repairs": fixes})
            results = yield Plan(
                [RunAction(command=f"{CHILD} solve {base} -k {job.options.rollouts}")],
                "The task is valid; see how the current solver does on it.",
            )
            output = results[0].output if results else ""
            if output.startswith("ACCEPTED") or rounds >= job.options.max_rounds:
                verdict = output.splitlines()[0] if output else "no verdict"
                note = f"- {case.id}: {base} ({family.name}) -> {verdict}\n"
                yield Plan(
                    [RunAction(command=f"cat >> memory/notes.md <<'NOTE'\n{note}NOTE")],
                    "Note the outcome for next time.",
                )
                yield Plan([FinishAction(message=f"{base}: {verdict}")], "Done.")
                return
            variant += 1
            draft = self.proposer.draft(
                case, job.attempt, variant=variant, allow_flaw=False
            )  # its validation is the next round


def _repair_files(
    files: dict[str, str | bytes], feedback: str
) -> tuple[dict[str, str | bytes], dict[str, str | bytes], list[str], list[str]]:
    """Run the fixer on a scratch copy of the task; return (new files, changed, deleted, repair notes)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "task"
        write_files(root, files)
        fixes = [str(r) for r in repair(root, feedback)]
        new: dict[str, str | bytes] = {}
        for path in root.rglob("*"):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                new[rel] = path.read_bytes() if isinstance(files.get(rel), bytes) else path.read_text()
    writes = {rel: data for rel, data in new.items() if files.get(rel) != data}
    deletes = sorted(set(files) - set(new))
    return new, writes, deletes, fixes


# -- running it ---------------------------------------------------------------------------


def proposer_task(
    workspace: Workspace, case: SeedCase, task_name: str, *, rollouts: int, attempt: int, network: str = "no-network"
) -> Path:
    """The Harbor task whose sandbox the proposer works in (its instruction is the proposer brief)."""
    from autoenv.proposer.llm import brief

    root = workspace.root / ".proposer" / f"task-{attempt}"
    if root.exists():
        shutil.rmtree(root)
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    (root / "instruction.md").write_text(brief(case, workspace, task_name, agentic=True, rollouts=rollouts))
    (root / "task.toml").write_text(
        textwrap.dedent(f"""\
        schema_version = "1.4"

        [metadata]
        category = "task-design"
        author_name = "autoenv"

        [verifier]
        timeout_sec = 60.0

        [agent]
        timeout_sec = 3600.0

        [environment]
        build_timeout_sec = 300.0
        cpus = 1
        memory_mb = 2048
        network_mode = "{network}"
        """)
    )
    (root / "environment" / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nRUN pip install --no-cache-dir pytest==8.3.4\nWORKDIR {SANDBOX_ROOT}\n"
    )
    test_sh = root / "tests" / "test.sh"
    test_sh.write_text(
        "#!/bin/bash\n# The proposer's own episode reward is informational; r_P comes from validating its task.\n"
        "mkdir -p /logs/verifier\n"
        f"if ls {SANDBOX_ROOT}/tasks/*/task.toml >/dev/null 2>&1; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    test_sh.chmod(0o755)
    solve = root / "solution" / "solve.sh"
    solve.write_text("#!/bin/bash\necho 'the proposer task has no reference solution' >&2\nexit 1\n")
    solve.chmod(0o755)
    return root


@dataclass
class AgenticOutcome:
    task_dir: Path | None
    actions: list[ProposerAction]
    rounds: int
    child_calls: list[ChildCall]
    trial_dir: str
    error: str | None = None
    finish_message: str | None = None
    repairs: list[str] = field(default_factory=list)


def agentic_task_name(case: SeedCase, *, policy: str, seed: int, attempt: int, proposer: ScriptedProposer) -> str:
    if policy == ProposerPolicy.SCRIPTED:
        return proposer.draft(case, attempt).name
    return f"{slug(case.id, 20)}-s{seed}-a{attempt}"


async def run_agentic(
    case: SeedCase,
    workspace: Workspace,
    *,
    attempt: int,
    options: ProposeOptions,
    trials_dir: Path,
    mask_paths: list[Path] | None = None,
    since: float | None = None,
) -> AgenticOutcome:
    """One agentic attempt: a proposer trial in its own sandbox, child sandboxes served on demand."""
    from autoenv.trials.runner import arun_trial

    policy, env, rollouts, seed, network = (
        options.policy,
        options.env,
        options.rollouts,
        options.seed,
        options.network_mode,
    )
    model, base_url, flaw_rate = options.model, options.base_url, options.flaw_rate
    scripted = ScriptedProposer(seed=seed, flaw_rate=flaw_rate, workspace=workspace)
    task_name = agentic_task_name(case, policy=policy, seed=seed, attempt=attempt, proposer=scripted)
    jobs = workspace.root / ".proposer"
    jobs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    result_file = str(jobs / f"result-{attempt}-{stamp}.json")
    job = AgenticJob(
        case=case,
        workspace=str(workspace.root),
        attempt=attempt,
        task_name=task_name,
        options=options,
        trials_dir=str(trials_dir),
        result_file=result_file,
    )
    job_file = jobs / f"job-{attempt}-{stamp}.json"
    job_file.write_text(job.model_dump_json(indent=2))
    task = proposer_task(workspace, case, task_name, rollouts=rollouts, attempt=attempt, network=network)
    kwargs: dict[str, Any] = {
        "job": str(job_file),
        "policy": str(SolverPolicy.SCRIPTED if policy == ProposerPolicy.SCRIPTED else SolverPolicy.OPENAI),
        "seed": seed,
    }
    env_kwargs = {"mask_paths": [str(p) for p in [workspace.root, *(mask_paths or [])]]} if env == "local" else None
    outcome = await arun_trial(
        task,
        "autoenv.proposer.agentic:ProposerAgent",
        env=env,
        model=model if policy != ProposerPolicy.SCRIPTED else None,
        agent_kwargs={**kwargs, **({"base_url": base_url} if base_url and policy != ProposerPolicy.SCRIPTED else {})},
        trials_dir=trials_dir / "proposer",
        env_kwargs=env_kwargs,
    )
    result = (
        AgenticResult.model_validate_json(Path(job.result_file).read_text())
        if Path(job.result_file).is_file()
        else AgenticResult(error=outcome.error_message or outcome.error or "the proposer episode left no result")
    )
    infra = result.error and result.error.split(":", 1)[0] in INFRA_ERRORS
    if infra or (outcome.error and outcome.error.startswith("policy_")):
        raise PolicyError(f"the proposer's model could not be reached: {result.error or outcome.error_message}")
    if result.error and result.error.split(":", 1)[0] in BUG_ERRORS:
        raise RuntimeError(f"the proposer harness failed (a bug in autoenv, not a bad task): {result.error}")
    actions, repairs = trajectory_actions(Path(outcome.trial_dir) / "agent" if outcome.trial_dir else None, since=since)
    final = workspace.tasks / result.final_task if result.final_task else None
    return AgenticOutcome(
        task_dir=final if final is not None and (final / "task.toml").is_file() else None,
        actions=actions,
        rounds=sum(1 for c in result.child_calls if c.verb == "validate"),
        child_calls=result.child_calls,
        trial_dir=outcome.trial_dir,
        error=result.error or (f"{outcome.error}: {outcome.error_message}" if outcome.error else None),
        finish_message=result.finish_message,
        repairs=repairs,
    )


def trajectory_actions(agent_dir: Path | None, *, since: float | None = None) -> tuple[list[ProposerAction], list[str]]:
    """Every tool call of the proposer episode, classified Read/Build/Write/Test, and the repairs it noted.

    Times are seconds since ``since`` (wall clock; the attempt's start), else since the first step.
    """
    if agent_dir is None or not (agent_dir / "trajectory.json").is_file():
        return [], []
    steps = json.loads((agent_dir / "trajectory.json").read_text()).get("steps", [])
    t0 = since
    out: list[ProposerAction] = []
    repairs: list[str] = []
    for step in steps:
        stamp = step.get("timestamp")
        try:
            when = datetime.fromisoformat(stamp).timestamp() if stamp else None
        except ValueError:
            when = None
        if t0 is None and when is not None:
            t0 = when
        t = round(max(0.0, when - t0), 3) if when is not None and t0 is not None else 0.0
        note = (step.get("message") or "") if step.get("source") == "agent" else ""
        repairs += [str(r) for r in ((step.get("extra") or {}).get("repairs") or [])]
        for call in step.get("tool_calls") or []:
            name, args = call.get("function_name", ""), call.get("arguments") or {}
            detail = describe_tool_call(name, args)
            if note.lower().startswith("repair"):
                detail = f"repair: {detail}"
            out.append(ProposerAction(t=t, kind=classify_tool_call(name, args), detail=detail[:500]))
    return out, repairs

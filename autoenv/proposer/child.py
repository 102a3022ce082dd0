"""``autoenv-child``: the proposer's child sandboxes, served on the host.

The agent loop reaches the proposer's sandbox only through ``environment.exec``; :class:`ServedEnvironment`
sits in that path and serves an ``autoenv-child`` command line itself: it copies the task folder out of the
sandbox, runs the real validator or calibrator on it (each trial a fresh sandbox of its own) and returns
their report as the command's output. :class:`AgenticJob` is what the proposer agent is told to do.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from pydantic import BaseModel, Field

from autoenv.proposer.models import ProposeOptions, SeedCase
from autoenv.proposer.workspace import Workspace, mirror_task, solver_entry

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
echo "Run it as a command of its own, e.g.: {CHILD} validate tasks/NAME   or   {CHILD} solve tasks/NAME" >&2
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
        if any(a in ("-h", "--help", "help") for a in rest):
            return self.usage(verb), True
        if verb == "validate" and self.rounds_used() >= self.job.options.max_rounds:
            return (
                f"{CHILD} validate: no validation rounds left: this attempt has {self.job.options.max_rounds} "
                "(--max-rounds; a round is one `validate`). Call finish with the task you want judged.",
                None,
            )
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
        return await self._solve(environment, host_task, k, call)

    def rounds_used(self) -> int:
        """Validation rounds spent: a round is one ``validate`` that ran (help and refusals are not rounds)."""
        return sum(1 for c in self.calls if c.verb == "validate" and c.ok is not None)

    def usage(self, verb: str | None = None) -> str:
        lines = {
            "validate": f"{CHILD} validate tasks/NAME       validate the task in separate sandboxes (every check, with "
            f"what to fix); one round of {self.job.options.max_rounds} (--max-rounds)",
            "solve": f"{CHILD} solve tasks/NAME [-k K]   run K rollouts of the current solver (default "
            f"{self.job.options.rollouts}, at most 16) and show each rollout's end",
            "check": f"{CHILD} check tasks/NAME          static format check only (free: not a round)",
        }
        shown = [lines[verb]] if verb in lines else list(lines.values())
        return "usage: " + "\n       ".join(shown)

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
        left = self.job.options.max_rounds - self.rounds_used() - 1
        lines = [
            head + (" [cached verdict for identical content]" if report.cached else f" in {report.duration_sec:.1f}s"),
            f"validation rounds left in this attempt: {left} of {self.job.options.max_rounds}",
            "",
        ]
        lines += [f"  {c.name:13s} {c.status:4s}  {c.summary}" for c in report.checks]
        if not report.valid or report.findings(Level.WARNING) or report.findings(Level.NOTE):
            lines += ["", report.feedback()]  # errors first, then warnings and notes, each with its level
        return "\n".join(lines), report.valid

    async def _solve(self, environment: BaseEnvironment, task: Path, k: int, call: ChildCall) -> tuple[str, bool]:
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
            lines += r.describe(i)
        text = "\n".join(lines)
        await self._note(environment, task.name, text)
        return text, report.accepted

    async def _note(self, environment: BaseEnvironment, name: str, text: str) -> None:
        """Keep what the solver did in the sandbox's ``memory/solver/<task>.md`` (and so, after the episode, in the
        workspace's), where the proposer can read it again."""
        from autoenv.agents.execute import write_scripts

        rel = f"memory/solver/{name}.md"
        old = await environment.exec(f"cat {SANDBOX_ROOT}/{rel} 2>/dev/null", timeout_sec=30)
        body = (old.stdout or "") + solver_entry(text)
        for script in write_scripts(f"{SANDBOX_ROOT}/{rel}", body):
            await environment.exec(script, timeout_sec=30)


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

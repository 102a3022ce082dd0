"""One error model: what kind of fault stopped a command, what it means for this task, what to do.

A user who runs ``autoenv trial`` or ``autoenv validate`` needs to tell four situations apart,
because each calls for a different fix: the task is wrong (fix the task), this backend cannot
run it (pick another backend, or change what the task asks for), the sandbox or a model endpoint
failed (infrastructure: retry or repair the machine), or autoenv has a bug (report it). Harbor
raises plain ``ValueError``/``RuntimeError``/pydantic errors for several of these; :func:`explain`
turns any exception into an :class:`Explanation` with a kind, a message that names the task, the
advice, and the exit code the CLI uses for that kind.

autoenv's own exceptions say whose fault they are by type: :class:`TaskError`, :class:`BackendError`,
:class:`SandboxFault` and :class:`EndpointError` (each carries its :class:`Fault`); anything else that
escapes is a bug. Each kind is handled at one boundary: the CLI exits with its code (``cli.common.fail_with``),
a proposer attempt that raised a task error is a rejected attempt (r_P 0) while every other kind stops
the run (``proposer.propose``), and a trial records the error kind in its outcome (``trials.runner``).
"""

from __future__ import annotations

import re
import tomllib
import traceback
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ValidationError


class Fault(StrEnum):
    TASK = "task"  # the task is wrong: fix the task
    BACKEND = "backend"  # the task is fine, this backend cannot run it
    SANDBOX = "sandbox"  # the sandbox runtime failed (infrastructure)
    ENDPOINT = "endpoint"  # a model endpoint failed (infrastructure)
    BUG = "bug"  # autoenv (or Harbor) failed: report it


#: Exit codes of the CLI, one per fault kind (0 is success, 1 a negative verdict such as "not valid").
EXIT_CODES: dict[Fault, int] = {Fault.TASK: 2, Fault.BACKEND: 3, Fault.SANDBOX: 4, Fault.ENDPOINT: 5, Fault.BUG: 70}


class AutoenvError(Exception):
    """An error autoenv raises on purpose; its type says whose fault it is."""

    fault: ClassVar[Fault] = Fault.BUG


class AgentLimitExceeded(Exception):
    """The graded agent passed a bound of its trial (what it left behind is too large, has too many files, takes too
    long to copy out). Not an error of anyone's: the agent's own failure, a verdict of 0 with this reason (the trial
    records it; :mod:`autoenv.trials.attribution` puts it on the agent), so it has no fault kind or exit code."""


class TaskError(AutoenvError):
    """The task (or the seed case, the input a user wrote) is wrong: fix it."""

    fault = Fault.TASK


class BackendError(AutoenvError, ValueError):
    """The input may be fine; this backend cannot run it (or does not exist)."""

    fault = Fault.BACKEND


class SandboxFault(AutoenvError, RuntimeError):
    """The sandbox runtime failed (runc, mounts, the network helper): infrastructure, not the task."""

    fault = Fault.SANDBOX


class EndpointError(AutoenvError, RuntimeError):
    """No reply could be had from a model endpoint: infrastructure, not the task or the policy's attempt."""

    fault = Fault.ENDPOINT


class MachineError(SandboxFault):
    """This machine cannot build or run sandboxes (a program missing, the build network, a stand-in that cannot be
    made, disk full): infrastructure, never a verdict on the task. ``autoenv doctor`` says what to install."""


class BuildError(TaskError):
    """The task's environment cannot be built; the message names the Dockerfile line."""


class BackendUnsupported(BackendError):
    """This backend cannot run the task as written (a network policy, hardware); the task may be fine."""


class Explanation(BaseModel):
    """An exception said for a user: JSON-ready (``autoenv ... --json``)."""

    kind: Fault
    message: str
    advice: str
    exception: str
    exit_code: int

    def __str__(self) -> str:
        return f"{self.message}\n  -> {self.advice}" if self.advice else self.message


_UNSUPPORTED = re.compile(r"network_mode='([\w-]+)' is not supported by (\w+)")


def _pydantic_lines(exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err.get("loc", ())) or "(top level)"
        got = err.get("input")
        shown = "" if isinstance(got, dict) else f" (got {got!r})"
        lines.append(f"{where}: {err.get('msg', 'invalid')}{shown}")
    return lines


#: The error types that say whose fault they are: (types, fault, what the message says first, advice).
_BY_TYPE: list[tuple[type | tuple[type, ...], Fault, str, str]] = [
    (FileNotFoundError, Fault.TASK, "",
     "check the path: a task is a folder with task.toml, instruction.md, environment/ and tests/"),
    (TaskError, Fault.TASK, "", "fix what the message names"),
    (MachineError, Fault.SANDBOX, "this machine cannot run the local backend, not the task's fault: ",
     "run `autoenv doctor` for what is missing and the command that installs it, then run it again"),
    (SandboxFault, Fault.SANDBOX, "the sandbox failed, not the task: ",
     "check the machine (`autoenv doctor`; `scripts/system-deps.sh backend` installs what it needs) and run it again"),
    (EndpointError, Fault.ENDPOINT, "the model endpoint failed, not the task: ",
     "check --base-url, the API key and that the server is up, then run it again"),
]  # fmt: skip


def explain(exc: BaseException, *, task: Path | str | None = None, env: str | None = None) -> Explanation:
    """What ``exc`` means for ``task`` run on ``env``, and what to do about it."""
    name = Path(task).name if task else "task"
    text = str(exc).strip()

    def make(kind: Fault, message: str, advice: str) -> Explanation:
        return Explanation(
            kind=kind, message=message, advice=advice, exception=type(exc).__name__, exit_code=EXIT_CODES[kind]
        )

    if isinstance(exc, ValidationError):
        lines = _pydantic_lines(exc)
        return make(
            Fault.TASK,
            f"{name}/task.toml is not a valid Harbor task configuration:\n  " + "\n  ".join(lines),
            "fix these fields in task.toml; `autoenv task check` lists every problem of the task",
        )
    if isinstance(exc, tomllib.TOMLDecodeError):
        return make(Fault.TASK, f"{name}/task.toml is not valid TOML: {text}", "fix the TOML syntax at that line")
    if isinstance(exc, BuildError):
        return make(
            Fault.TASK,
            f"{name}: environment/Dockerfile does not build: {text.splitlines()[0] if text else ''}",
            "fix the Dockerfile line it names (the full build log is in the message above, or run `autoenv images "
            "make`)",
        )
    if isinstance(exc, BackendError) and not _UNSUPPORTED.search(text):
        return make(Fault.BACKEND, text, "choose one of the backends it lists")
    if (m := _UNSUPPORTED.search(text)) is not None:
        mode, backend = m.group(1), m.group(2)
        supported = {
            "local": "no-network and public",
            "docker": "no-network and public (allowlist needs Harbor's egress image)",
        }
        return make(
            Fault.BACKEND,
            f'{name} asks for network_mode = "{mode}", which the {env or backend} backend cannot enforce '
            f"(it enforces {supported.get(env or backend, 'other modes')}); the task itself may be fine",
            "run it on a Harbor environment that enforces this policy, or change [environment] network_mode in "
            "task.toml",
        )
    if isinstance(exc, RuntimeError) and re.search(r"requires (a )?(GPU|TPU)|does not support (GPU|TPU)", text, re.I):
        return make(Fault.BACKEND, f"{name}: {text}", "run it on a backend with that hardware")
    for types, kind, what, advice in _BY_TYPE:
        if isinstance(exc, types):
            return make(kind, f"{name + ': ' if task else ''}{what}{text}", advice)
    return make(
        Fault.BUG,
        f"{name}: {type(exc).__name__}: {text}",
        "this is a bug in autoenv or Harbor, not a verdict on the task; please report it with this traceback:\n"
        + "".join(traceback.format_exception(exc)).rstrip(),
    )

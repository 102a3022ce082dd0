"""Validation's own tools inside a task's sandbox: a static busybox the image's programs cannot stand in for.

The probes validation runs in a task's sandbox (the partial-solution trial's scan and damage, the adversary's own
shell work, the leak scan on backends autoenv cannot read directly) must not run the image's programs: the task's
author wrote the Dockerfile and ``solution/solve.sh``, and either can put a ``find`` that prints nothing, or a ``cp``
that lies, in front of the real ones (``/usr/local/bin`` comes first on PATH), or replace the ``bash`` that Harbor's
``exec`` wraps commands in. A proposer optimising r_P finds that as surely as a solver finds ``os._exit(0)``.

:mod:`autoenv.sandbox.toolbox` says where the busybox comes from on each backend. Here it gets a fresh folder of
applet links per use (made after the solution ran, for the scan); probes run its shell with those applets alone on
PATH, started directly where the backend can (:class:`~autoenv.sandbox.toolbox.RawExec`: local, Docker), through
``exec`` elsewhere.
"""

from __future__ import annotations

import shlex
import uuid
from dataclasses import dataclass

from harbor.environments.base import BaseEnvironment, ExecResult

from autoenv.errors import MachineError
from autoenv.sandbox.toolbox import TOOLBOX_MOUNT, RawExec, host_busybox

__all__ = ["Toolset", "host_busybox", "run_confined", "upload_toolset"]


@dataclass(frozen=True)
class Toolset:
    """A busybox in the sandbox (``busybox``) and a folder of links to its applets (``bin``)."""

    busybox: str
    bin: str


async def _start(
    environment: BaseEnvironment, argv: list[str], *, user: str | int | None, timeout_sec: int
) -> ExecResult:
    if isinstance(environment, RawExec):
        return await environment.exec_argv(argv, user=user, timeout_sec=timeout_sec)
    return await environment.exec(command=shlex.join(["exec", *argv]), user=user, timeout_sec=timeout_sec)


async def upload_toolset(environment: BaseEnvironment) -> Toolset:
    """Make a fresh folder of busybox applet links in the sandbox (the busybox itself copied in where needed)."""
    name = uuid.uuid4().hex
    folder = f"/tmp/.autoenv-tools-{name}"
    # the local backend binds busybox at TOOLBOX_MOUNT; a busybox there that is not ours cannot be: it is a
    # read-only bind the sandbox cannot replace. Elsewhere it is copied in (Docker's copy is the daemon's, no
    # program of the image's takes part) under a name busybox answers to, then moved into place by itself.
    probe = await _start(environment, [TOOLBOX_MOUNT, "true"], user="root", timeout_sec=30)
    if probe.return_code == 0:
        busybox = TOOLBOX_MOUNT
        steps = [[busybox, "mkdir", "-p", f"{folder}/bin"]]
    else:
        landed = f"/tmp/busybox-autoenv-{name}"
        await environment.upload_file(host_busybox(), landed)
        busybox = f"{folder}/busybox"
        steps = [
            [landed, "mkdir", "-p", f"{folder}/bin"],
            [landed, "mv", landed, busybox],
            [busybox, "chmod", "755", busybox],
        ]
    steps.append([busybox, "--install", "-s", f"{folder}/bin"])
    for argv in steps:
        made = await _start(environment, argv, user="root", timeout_sec=60)
        if made.return_code != 0:
            raise MachineError(
                f"could not set up validation's busybox in the sandbox ({shlex.join(argv)}): "
                f"{(made.stderr or made.stdout or '')[-500:]}"
            )
    return Toolset(busybox=busybox, bin=f"{folder}/bin")


def _argv(script: str, tools: Toolset, then_image: bool) -> list[str]:
    path = f"{tools.bin}:$PATH" if then_image else tools.bin
    return [tools.busybox, "sh", "-c", f"export PATH={path}; {script}"]


async def run_confined(
    environment: BaseEnvironment,
    script: str,
    tools: Toolset,
    *,
    user: str | int | None = "root",
    timeout_sec: int = 120,
    then_image: bool = False,
) -> ExecResult:
    """Run ``script`` with validation's busybox: started directly where the backend can, else via ``exec``."""
    return await _start(environment, _argv(script, tools, then_image), user=user, timeout_sec=timeout_sec)

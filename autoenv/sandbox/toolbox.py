"""The static busybox that validation brings into a task's sandbox, and where each backend puts it.

Validation's probes (the partial-solution scan, the adversary's own shell work, the leak scan) must not run a
program the task's author could have replaced: not the image's ``find`` or ``cp``, and not the ``bash`` that
Harbor's ``exec`` wraps every command in. Debian's ``busybox-static`` has no library to load. The local backend
binds it read-only into every sandbox at :data:`TOOLBOX_MOUNT` (as Docker's ``--init`` binds its init at
``/dev/init``), so it is there before the agent runs and nothing in the sandbox can change it; other backends get
it copied in by their daemon (``docker compose cp``) just before use. Backends that can start a program without a
shell offer ``exec_argv`` (see :class:`RawExec`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol, runtime_checkable

from harbor.environments.base import ExecResult

from autoenv.errors import MachineError

#: Where Debian's busybox-static puts its binary (``busybox`` is the dynamically linked package: not usable).
BUSYBOX = Path("/bin/busybox")

#: Where the local backend binds it in every sandbox. The name starts with "busybox": busybox reads the applet to
#: run from its own file name, and one starting so takes the applet from its first argument.
TOOLBOX_MOUNT = "/dev/busybox-autoenv"


def host_busybox() -> Path:
    """The static busybox on this machine; :class:`MachineError` when there is none."""
    path = BUSYBOX if BUSYBOX.is_file() else Path(shutil.which("busybox") or BUSYBOX)
    try:
        head = path.read_bytes()[:65536]
    except OSError:
        raise MachineError(
            f"{path} not found: validation runs its probes with a static busybox (apt-get install busybox-static)"
        ) from None
    if not head.startswith(b"\x7fELF") or b"ld-linux" in head or b"ld-musl" in head:
        raise MachineError(f"{path} is not a statically linked busybox (apt-get install busybox-static)")
    return path


def host_busybox_or_none() -> Path | None:
    try:
        return host_busybox()
    except MachineError:
        return None


@runtime_checkable
class RawExec(Protocol):
    """A backend that runs a program in the sandbox directly, with no shell of the image's in between."""

    async def exec_argv(
        self, argv: list[str], *, user: str | int | None = None, timeout_sec: int | None = None
    ) -> ExecResult: ...


__all__ = ["BUSYBOX", "TOOLBOX_MOUNT", "RawExec", "host_busybox", "host_busybox_or_none"]

"""Validation's own tools inside a task's sandbox: a static busybox, uploaded to a fresh folder per use.

The probes validation runs in a task's sandbox (the partial-solution trial's scan and damage) must not run the
image's programs: the task's author wrote the Dockerfile and ``solution/solve.sh``, and either can put a ``find``
that prints nothing, or a ``cp`` that lies, in front of the real ones (``/usr/local/bin`` comes first on PATH).
A proposer optimising r_P finds that as surely as a solver finds ``os._exit(0)``. Debian's ``busybox-static``
has no library to load and every applet the probes use; it is copied in under a random name just before it is
needed (after the solution ran, for the scan), and the probe's PATH holds its applets alone.
"""

from __future__ import annotations

import shlex
import shutil
import uuid
from pathlib import Path

from harbor.environments.base import BaseEnvironment

from autoenv.errors import MachineError

#: Where Debian's busybox-static puts its binary (``busybox`` is the dynamically linked package: not usable).
BUSYBOX = Path("/bin/busybox")


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


async def upload_toolset(environment: BaseEnvironment) -> str:
    """Copy busybox into a new folder in the sandbox, with its applets linked under ``bin/``; return the folder."""
    name = uuid.uuid4().hex
    folder, landed = f"/tmp/.autoenv-tools-{name}", f"/tmp/busybox-autoenv-{name}"
    # into /tmp itself (Docker's copy does not make missing folders), then moved into place by busybox alone;
    # the name starts with "busybox" because busybox takes the applet to run from its own file name
    await environment.upload_file(host_busybox(), landed)
    q = shlex.quote(f"{folder}/busybox")
    made = await environment.exec(
        command=f"{landed} mkdir -p {folder}/bin && {landed} mv {landed} {q} && {q} chmod 755 {q} "
        f"&& {q} --install -s {folder}/bin",
        user="root",
        timeout_sec=60,
    )
    if made.return_code != 0:
        raise MachineError(f"could not set up validation's busybox in the sandbox: {(made.stderr or '')[-500:]}")
    return folder


def confined(script: str, folder: str) -> str:
    """``script`` run by the uploaded busybox's shell, with only its applets on PATH.

    ``exec``: the busybox shell takes the place of the image's ``bash -c`` that Harbor's ``exec`` starts, so no
    process of the image's stays in between (and a script that stops earlier processes does not stop its own
    parent).
    """
    return f"exec {shlex.quote(folder + '/busybox')} sh -c {shlex.quote(f'export PATH={folder}/bin; ' + script)}"

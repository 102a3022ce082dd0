"""What a sandbox needs of the host, outside any container: the OCI runtime's command line and state, the
cgroup's processes, the mounts and the disk image of a writable layer, and whether this machine can run any of it.

The errors say whose fault a failure is: :class:`SandboxStartError` is this machine's, before any code of the task
or the agent ran.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

from autoenv.errors import MachineError, SandboxFault


class SandboxError(SandboxFault):
    """The sandbox could not be created, or the runtime failed (not the task's fault)."""


class SandboxStartError(SandboxError, MachineError):
    """No sandbox could be started (the runtime, its mounts, the disk image of its writable layer): this machine's
    fault before any of the task's or the agent's code ran. Stages stop on it; nothing is recorded."""


def runtime_root(runtime: str) -> Path:
    return Path(os.environ.get("AUTOENV_RUNTIME_ROOT", "/run/autoenv")) / runtime


def runtime_argv(runtime: str) -> list[str]:
    argv = [runtime, "--root", str(runtime_root(runtime))]
    if runtime == "runsc":
        # gVisor's own network stack with loopback only (see Container: no-network tasks only)
        argv += ["--network=none"]
    return argv


def cgroup_procs(cgroups_path: str) -> list[int]:
    """Host PIDs of every process in the container's cgroup (v1 pids controller or v2)."""
    rel = cgroups_path.lstrip("/")
    for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        procs = base / rel / "cgroup.procs"
        if procs.is_file():
            try:
                return [int(p) for p in procs.read_text().split()]
            except OSError:
                return []
    return []


def _freezer_state(cgroups_path: str) -> tuple[Path, str, str, str] | None:
    """The file that freezes the container's cgroup, with what to write to freeze and thaw it and what it reads
    once frozen (v1 freezer controller or v2's cgroup.freeze); None where neither exists."""
    rel = cgroups_path.lstrip("/")
    v1 = Path("/sys/fs/cgroup/freezer") / rel / "freezer.state"
    if v1.is_file():
        return v1, "FROZEN", "THAWED", "FROZEN"
    v2 = Path("/sys/fs/cgroup") / rel / "cgroup.freeze"
    if v2.is_file():
        return v2, "1", "0", "1"
    return None


def kill_cgroup_but(cgroups_path: str, keep: int | None, *, settle: float = 2.0) -> None:
    """SIGKILL every process of the container's cgroup but ``keep`` (its init), with the cgroup frozen meanwhile.

    A process that forks as fast as it can (a fork bomb whose children leave the session) outruns a list-then-kill:
    children born between reading ``cgroup.procs`` and the kills survive. Frozen, nothing forks; the kills land on
    the whole list and take effect on the thaw (what ``runc kill --all`` does). Without a freezer, or if freezing
    does not settle, the list is killed again until nothing but ``keep`` is left."""
    freezer = _freezer_state(cgroups_path)
    frozen = False
    if freezer is not None:
        path, freeze, thaw, done = freezer
        try:
            path.write_text(freeze)
            deadline = time.monotonic() + settle
            while not (frozen := path.read_text().strip() == done) and time.monotonic() < deadline:
                time.sleep(0.01)
        except OSError:
            freezer = None
    try:
        _kill_listed(cgroups_path, keep)
    finally:
        if freezer is not None:
            try:
                freezer[0].write_text(freezer[2])
            except OSError:
                pass
    if frozen:
        return
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline and _kill_listed(cgroups_path, keep):
        time.sleep(0.01)


def _kill_listed(cgroups_path: str, keep: int | None) -> int:
    """SIGKILL what the cgroup lists now but ``keep``; how many were signalled."""
    signalled = 0
    for pid in cgroup_procs(cgroups_path):
        if pid != keep:
            try:
                os.kill(pid, signal.SIGKILL)
                signalled += 1
            except ProcessLookupError:
                pass
    return signalled


def wait_gone(pid: int, timeout: float) -> None:
    """Wait for a process that is not our child to end (its pidfd becomes readable when it does)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # already gone
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def runtime_problem(runtime: str = "runc") -> str | None:
    """Why this machine cannot run the local backend, or None."""
    if os.geteuid() != 0:
        return (
            "the local backend runs sandboxes with an OCI runtime and needs root "
            "(run as root, or use --env docker / --env podman)"
        )
    missing = [tool for tool in (runtime, "buildah") if not shutil.which(tool)]
    if missing:
        return f"{' and '.join(missing)} not found (bash scripts/system-deps.sh installs them from Debian's packages)"
    try:
        from autoenv.sandbox.local.seccomp import profile_path

        profile_path()
    except RuntimeError as exc:
        return str(exc)
    return None


def run_checked(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, cwd="/")
    if result.returncode != 0:
        raise SandboxStartError(f"{' '.join(argv)} failed: {result.stderr.strip()}")


def make_layer_filesystem(image: Path, size_mb: int) -> None:
    """An empty ext4 filesystem of ``size_mb`` in a sparse file (~10 ms: no journal, lazy inode tables)."""
    with open(image, "wb") as handle:
        handle.truncate(int(size_mb) << 20)
    mkfs = shutil.which("mkfs.ext4") or "/sbin/mkfs.ext4"
    run_checked([mkfs, "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard", str(image)])


def mount(args: list[str]) -> None:
    run_checked(["mount", *args])

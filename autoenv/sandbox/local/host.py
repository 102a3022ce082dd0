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


def kill_cgroup_but(cgroups_path: str, keep: int | None, *, born_since: int | None = None, settle: float = 2.0) -> None:
    """SIGKILL every process of the container's cgroup but ``keep`` (its init), with the cgroup frozen meanwhile;
    with ``born_since`` (:func:`boot_ticks` when a command started), only what that command started
    (:func:`_started_since`): the agent's background jobs of earlier commands live on, as in a terminal.

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
        _kill_listed(cgroups_path, keep, born_since)
    finally:
        if freezer is not None:
            try:
                freezer[0].write_text(freezer[2])
            except OSError:
                pass
    if frozen:
        return
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline and _kill_listed(cgroups_path, keep, born_since):
        time.sleep(0.01)


def _kill_listed(cgroups_path: str, keep: int | None, born_since: int | None = None) -> int:
    """SIGKILL what the cgroup lists now but ``keep`` (with ``born_since``: what :func:`_started_since` picks);
    how many were signalled."""
    signalled = 0
    listed = cgroup_procs(cgroups_path)
    if born_since is not None:
        listed = _started_since(listed, keep, born_since)
    for pid in listed:
        if pid != keep:
            try:
                os.kill(pid, signal.SIGKILL)
                signalled += 1
            except ProcessLookupError:
                pass
    return signalled


def boot_ticks() -> int:
    """Now, in the clock ticks since boot that ``/proc/PID/stat`` gives a process's start in."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _stat(pid: int) -> tuple[int, int] | None:
    """A process's parent and start (``/proc/PID/stat``'s fields 4 and 22, after the command name, which may hold
    spaces and parentheses); None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19])


def _started_since(pids: list[int], init: int | None, since: int) -> list[int]:
    """What a command that started at ``since`` started, among ``pids`` (frozen, so their parents hold still):
    a process born since then whose living ancestors below ``init`` were all born since then too. The command's
    own tree is that, and so is what left it (a daemon, a bomb's children in sessions of their own: reparented to
    ``init``, born since). An earlier command's background job was born before, and what it starts meanwhile has
    it for an ancestor: both live on."""
    stats = {pid: _stat(pid) for pid in pids}
    verdict: dict[int, bool] = {}

    def started(pid: int) -> bool:
        chain, result = [], True
        while pid not in verdict:
            stat = stats.get(pid)
            if pid == init or stat is None:  # the top (the init, or out of the cgroup): every link was born since
                break
            if stat[1] < since:  # an older ancestor: a background job's
                result = False
                break
            chain.append(pid)
            pid = stat[0]
        else:
            result = verdict[pid]
        verdict.update(dict.fromkeys(chain, result))
        return result

    return [pid for pid in pids if pid != init and stats[pid] is not None and started(pid)]


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

"""A container without a container engine: Linux namespaces around an overlay root.

One long-lived *holder* process owns a mount, PID, UTS and IPC namespace (and a
network namespace when the task disallows internet). Its root is an overlayfs
whose lower layers are the built image and the host's ``/`` and whose upper
layer belongs to this sandbox alone, so ``/app``, ``/tests`` and ``/logs`` are
real paths for every process while the host stays untouched. Commands join the
holder with ``nsenter``; killing the holder (PID 1 of the namespace) makes the
kernel kill everything left inside, which is how we guarantee no leftovers.

Why not bubblewrap: it needs a package the machine may lack, and an overlay
root with persistent state across many ``exec`` calls is simpler with a holder.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import resource
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: Environment every sandboxed process starts from: never the caller's, so
#: API keys and the host's PATH do not leak into tasks.
BASE_ENV = {
    "PATH": DEFAULT_PATH,
    "HOME": "/root",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "DEBIAN_FRONTEND": "noninteractive",
    # Debian marks its Python externally managed; images like python:3.12-slim
    # do not, so `pip install` in a Dockerfile must work as it does there.
    "PIP_BREAK_SYSTEM_PACKAGES": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_ROOT_USER_ACTION": "ignore",
    "PYTHONDONTWRITEBYTECODE": "1",
}


#: The capabilities Docker grants a container by default (everything else is dropped).
DOCKER_CAPS = "-all," + ",".join(f"+{c}" for c in (
    "chown", "dac_override", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap", "net_bind_service",
    "net_raw", "sys_chroot", "mknod", "audit_write", "setfcap"))


class SandboxError(RuntimeError):
    """The sandbox could not be created or has died."""


class CommandTimeout(RuntimeError):
    pass


@dataclass
class Limits:
    """Per-process resource limits applied to every command in the sandbox."""

    memory_mb: int | None = None
    cpus: float | None = None
    cpu_seconds: int | None = None
    max_processes: int | None = 4096

    def apply(self) -> None:  # runs in the child between fork and exec
        if self.memory_mb:
            size = self.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_DATA, (size, size))
        if self.cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds))
        if self.cpus:
            allowed = sorted(os.sched_getaffinity(0))
            keep = max(1, int(round(self.cpus)))
            os.sched_setaffinity(0, allowed[:keep])


@dataclass
class CommandResult:
    return_code: int
    stdout: str
    stderr: str


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def namespaces_available() -> tuple[bool, str]:
    """Whether this machine lets us make the namespaces and overlay we need."""
    if not shutil.which("unshare") or not shutil.which("nsenter"):
        return False, "util-linux 'unshare'/'nsenter' not found"
    probe = ["unshare", "--mount", "--pid", "--fork", "true"]
    if os.geteuid() != 0:
        probe[1:1] = ["--user", "--map-root-user"]
    try:
        result = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    if result.returncode != 0:
        return False, result.stderr.strip() or f"unshare exited {result.returncode}"
    return True, "ok"


@dataclass
class Sandbox:
    """One namespace holder over an optional image layer."""

    root: Path
    image_layer: Path | None = None
    network: bool = True
    hostname: str = "sandbox"
    mask_paths: list[Path] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    upper: Path | None = None

    _holder: subprocess.Popen | None = None
    _pid1: int | None = None

    @property
    def upper_dir(self) -> Path:
        return self.upper or self.root / "upper"

    @property
    def pid(self) -> int:
        if self._pid1 is None:
            raise SandboxError("sandbox is not running")
        return self._pid1

    def host_path(self, path: str) -> Path:
        """The host path through which the sandbox's ``path`` is reachable."""
        return Path(f"/proc/{self.pid}/root") / path.lstrip("/")

    @staticmethod
    def _dev_lines(merged: Path) -> list[str]:
        """A minimal /dev like a container's: no host disks, a private /dev/shm and ptys."""
        dev = shlex.quote(str(merged / "dev"))
        lines = [f"mount -t tmpfs -o mode=755,nosuid tmpfs {dev}"]
        for node in ("null", "zero", "full", "random", "urandom", "tty"):
            lines.append(f"touch {dev}/{node} && mount --bind /dev/{node} {dev}/{node}")
        lines += [
            f"mkdir -p {dev}/pts {dev}/shm",
            f"mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts {dev}/pts 2>/dev/null && ln -sf pts/ptmx {dev}/ptmx || true",
            f"mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs {dev}/shm",
            f"ln -s /proc/self/fd {dev}/fd; ln -s /proc/self/fd/0 {dev}/stdin; ln -s /proc/self/fd/1 {dev}/stdout; ln -s /proc/self/fd/2 {dev}/stderr",
        ]
        return lines

    def _setup_script(self) -> str:
        merged = self.root / "merged"
        q = shlex.quote
        lines = ["set -e"]
        lower = "/"
        if self.image_layer is not None:
            # Overlayfs refuses two lower layers on one filesystem when one
            # contains the other (the layer lives under "/"), but accepts an
            # upper inside its lower. So the image is mounted read-only as the
            # upper of a first overlay, which is the lower of the sandbox's own.
            lower = str(self.root / "image")
            lines.append(
                f"mount -t overlay overlay -o ro,lowerdir=/,upperdir={q(str(self.image_layer))},workdir={q(str(self.root / 'imagework'))} {q(lower)}"
            )
        lines += [
            f"mount -t overlay overlay -o lowerdir={q(lower)},upperdir={q(str(self.upper_dir))},workdir={q(str(self.root / 'work'))} {q(str(merged))}",
            f"mount -t proc proc {q(str(merged / 'proc'))}",
            *self._dev_lines(merged),
            # a fresh sysfs shows the sandbox's own network namespace
            (f"mount --rbind /sys {q(str(merged / 'sys'))} || true" if self.network
             else f"mount -t sysfs sysfs {q(str(merged / 'sys'))} || mount --rbind /sys {q(str(merged / 'sys'))} || true"),
            f"mount -t tmpfs -o mode=1777 tmpfs {q(str(merged / 'tmp'))}",
        ]
        for masked in self.mask_paths:
            target = merged / str(masked).lstrip("/")
            lines.append(f"if [ -d {q(str(target))} ]; then mount -t tmpfs -o size=1m,mode=755 tmpfs {q(str(target))}; fi")
        lines.append(f"hostname {q(self.hostname)} || true")
        if not self.network:
            lines.append("ip link set lo up 2>/dev/null || true")
        lines.append(f"echo ready > {q(str(self.root / 'ready'))}")
        lines.append(f"exec chroot {q(str(merged))} /bin/sh -c 'trap \"\" TERM; while :; do sleep 3600; done'")
        return "\n".join(lines)

    def start(self, timeout: float = 30.0) -> None:
        self.spawn()
        self.wait_ready(timeout)

    def spawn(self) -> None:
        """Launch the holder. Call it from a long-lived thread (the event loop's):
        the holder dies with the thread that spawned it, so a crashed or killed
        autoenv leaves no sandbox behind."""
        for sub in ("work", "merged", "image", "imagework"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.upper_dir.mkdir(parents=True, exist_ok=True)
        (self.root / "ready").unlink(missing_ok=True)
        argv = ["unshare", "--mount", "--pid", "--fork", "--uts", "--ipc", "--kill-child", "--propagation", "private"]
        if os.geteuid() != 0:
            argv[1:1] = ["--user", "--map-root-user"]
        if not self.network:
            argv.append("--net")
        argv += ["/bin/sh", "-c", self._setup_script()]
        log = open(self.root / "holder.log", "w")
        self._holder = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        log.close()

    def wait_ready(self, timeout: float = 30.0) -> None:
        assert self._holder is not None, "spawn() first"
        deadline = time.monotonic() + timeout
        while not (self.root / "ready").exists():
            if self._holder.poll() is not None:
                raise SandboxError(f"sandbox failed to start: {(self.root / 'holder.log').read_text().strip()[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise SandboxError("sandbox did not become ready in time")
            time.sleep(0.01)
        self._pid1 = self._find_pid1()

    def _find_pid1(self) -> int:
        assert self._holder is not None
        children = Path(f"/proc/{self._holder.pid}/task/{self._holder.pid}/children")
        for _ in range(500):
            pids = children.read_text().split()
            if pids:
                pid = int(pids[0])
                # wait until the holder has chrooted so nsenter -r sees the overlay
                if os.readlink(f"/proc/{pid}/root") != "/":
                    return pid
            time.sleep(0.01)
        raise SandboxError("could not find the sandbox's init process")

    def stop(self) -> None:
        if self._holder is None:
            return
        # Kill the namespace's PID 1 first: the kernel then kills everything
        # inside, and `unshare --fork` reaps it and exits, so no zombie lingers.
        if self._pid1 is not None:
            try:
                os.kill(self._pid1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self._holder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self._holder.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._holder.wait()
        self._holder = None
        self._pid1 = None

    def command_argv(self, command: str | list[str], *, cwd: str | None, user: str | int | None, shell: str = "/bin/bash") -> list[str]:
        argv = ["nsenter", "-t", str(self.pid), "-m", "-u", "-i", "-p", "-r"]
        if not self.network:
            argv.append("-n")
        run = [shell, "-c", command] if isinstance(command, str) else list(command)
        # Docker's default capability set: root in the task is not root over
        # the sandbox (no mount/umount of the masks, no ptrace, no raw devices).
        caps = ["--bounding-set", DOCKER_CAPS]
        if user in (None, "root", 0, "0"):
            run = ["setpriv", *caps, *run]
        elif isinstance(user, int) or str(user).isdigit():
            run = ["setpriv", *caps, f"--reuid={user}", f"--regid={user}", "--clear-groups", *run]
        else:
            # the user exists only in the sandbox's /etc/passwd: resolve there
            run = ["/bin/sh", "-c", 'u="$0" a="$1" b="$2"; shift 2; exec setpriv "$a" "$b" --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"', str(user), *caps, *run]
        wd = cwd or "/"
        # cd inside the sandbox (after nsenter -r) so relative paths and a
        # missing directory behave as in `docker exec -w`.
        return argv + ["/bin/sh", "-c", 'cd "$0" || exit 1; exec "$@"', wd, *run]

    async def run(
        self,
        command: str | list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | int | None = None,
        timeout: float | None = None,
        stdin: bytes | None = None,
    ) -> CommandResult:
        argv = self.command_argv(command, cwd=cwd, user=user)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**BASE_ENV, **(env or {})},
            start_new_session=True,
            preexec_fn=self.limits.apply,
            cwd="/",  # the caller's cwd may not exist in the sandbox root
        )
        try:
            if timeout:
                out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=timeout)
            else:
                out, err = await proc.communicate(stdin)
        except asyncio.TimeoutError:
            await self._kill_group(proc)
            raise CommandTimeout(f"Command timed out after {timeout} seconds") from None
        except BaseException:  # cancelled by the trial (agent timeout) or interrupted
            await self._kill_group(proc)
            raise
        return CommandResult(proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))

    @staticmethod
    async def _kill_group(proc: asyncio.subprocess.Process) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            await asyncio.wait_for(proc.wait(), timeout=5)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass

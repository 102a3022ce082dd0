"""One sandbox: an OCI container run by runc (or gVisor's runsc) over an image's root filesystem.

The container's root is an overlay of the image (read-only, shared by every
sandbox of that image) and a writable layer of its own. The runtime does
everything that isolates it (``pivot_root``, namespaces, cgroups, seccomp,
capabilities, masked paths; see :mod:`autoenv.sandbox.local.oci`). autoenv
never resolves a path of the sandbox on the host: commands run through the
sandbox's PID 1, a resident exec helper the runtime started with the
container's confinement (one fork/exec per command instead of a ``runtime
exec``), and files travel as tar streams through it, so a symlink the policy
planted can only point inside the sandbox.

A small *reaper* process holds a pipe from the autoenv process that started
the sandbox. When that process ends, however it ends (SIGKILL included), the
pipe closes and the reaper kills the container, removes its mounts and its
writable layer: a killed flywheel leaves nothing running.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoenv.sandbox.local import oci
from autoenv.sandbox.local.exec_helper import HELPER_MOUNT, ExecChannel, helper_binary
from autoenv.sandbox.local.host import (
    SandboxError,
    SandboxStartError,
    boot_ticks,
    cgroup_procs,
    kill_cgroup_but,
    make_layer_filesystem,
    mount,
    runtime_argv,
    wait_gone,
)
from autoenv.sandbox.toolbox import TOOLBOX_MOUNT, host_busybox_or_none
from autoenv.sandbox.transfer import ArchiveSink, TransferLimitExceeded, TransferLimits

#: The container's PID 1: the resident exec helper (:mod:`autoenv.sandbox.local.exec_helper`), which runs every
#: command of the sandbox and reaps orphans.
INIT_ARGS = [HELPER_MOUNT]


RUNTIMES = ("runc", "runsc")

#: How a reaper's script begins: it waits for the pipe from autoenv to close, then cleans up
#: (:mod:`autoenv.sandbox.local.sweep` finds sandboxes whose reaper is gone by it).
REAPER_WAITS = "cat >/dev/null; "


def cleanup_script(container_id: str, state_dir: Path, runtime: list[str]) -> str:
    """The shell commands that remove a sandbox whatever state it is in: its container (killed, deleted), its
    network helper, its mounts and its folder (the writable layer's image with it)."""
    q = shlex.quote
    rt = " ".join(q(a) for a in runtime)
    state = q(str(state_dir))
    return "; ".join(
        [
            f"{rt} kill {q(container_id)} KILL >/dev/null 2>&1",
            f"{rt} delete --force {q(container_id)} >/dev/null 2>&1",
            f"[ -f {state}/slirp.pid ] && kill -9 $(cat {state}/slirp.pid) 2>/dev/null",
            f"umount -l {q(str(state_dir / 'rootfs'))} 2>/dev/null",
            f"umount -l {q(str(state_dir / 'layer'))} 2>/dev/null",
            f"rm -rf {state}",
        ]
    )


SLIRP_DNS = "10.0.2.3"


#: The disk a sandbox may write when its task sets no ``storage_mb`` (``AUTOENV_DEFAULT_STORAGE_MB``): every
#: sandbox has a bound, and writing past it is ENOSPC inside the sandbox, never a full host disk.
DEFAULT_STORAGE_MB = int(os.environ.get("AUTOENV_DEFAULT_STORAGE_MB", "4096"))


class CommandTimeout(RuntimeError):
    pass


@dataclass
class CommandResult:
    return_code: int
    stdout: str
    stderr: str


@dataclass
class ContainerConfig:
    rootfs: Path
    env: dict[str, str]
    hostname: str = "sandbox"
    network: bool = False
    resources: oci.Resources = field(default_factory=oci.Resources)
    storage_mb: int | None = None
    runtime: str = "runc"


class Container:
    """A running sandbox. ``start``/``stop`` block (run them in a thread); commands are async."""

    def __init__(self, container_id: str, state_dir: Path, config: ContainerConfig):
        self.id = container_id
        self.state_dir = state_dir
        self.config = config
        self.cgroups_path = f"/autoenv/{container_id}"
        self._runtime = runtime_argv(config.runtime)
        if config.runtime == "runsc" and config.network:
            # Debian 12's runsc refuses the network namespace slirp4netns serves ("cannot run with
            # network enabled in root network namespace"); gVisor runs no-network tasks only
            raise SandboxError(
                'runsc (gVisor) runs tasks with network_mode = "no-network" only on this backend; '
                "use the runc runtime (the default) for tasks with network access"
            )
        self._init_pid: int | None = None
        self._slirp: subprocess.Popen | None = None
        self._reaper: subprocess.Popen | None = None
        self._users: dict[str, tuple[int, int, tuple[int, ...]]] = {}
        self._channel: ExecChannel | None = None

    # -- lifecycle -----------------------------------------------------------------

    @property
    def rootfs(self) -> Path:
        return self.state_dir / "rootfs"

    def start(self, timeout: float = 30.0) -> None:
        layer = self.state_dir / "layer"
        for sub in (layer, self.rootfs, self.state_dir / "etc"):
            sub.mkdir(parents=True, exist_ok=True)
        self._start_reaper()
        try:
            # the writable layer is an ext4 filesystem of storage_mb in a sparse file, loop-mounted: the sandbox's
            # disk is bounded on disk (not in memory, as a tmpfs would), and what it wrote is one file to remove
            make_layer_filesystem(self.state_dir / "layer.img", self.config.storage_mb or DEFAULT_STORAGE_MB)
            mount(["-o", "loop,nodev,nosuid", str(self.state_dir / "layer.img"), str(layer)])
            (layer / "upper").mkdir(exist_ok=True)
            (layer / "work").mkdir(exist_ok=True)
            mount(
                [
                    "-t",
                    "overlay",
                    "overlay",
                    "-o",
                    f"lowerdir={self.config.rootfs},upperdir={layer / 'upper'},workdir={layer / 'work'}",
                    str(self.rootfs),
                ]
            )
            etc = self._write_etc_files()
            etc[HELPER_MOUNT] = helper_binary()
            if (busybox := host_busybox_or_none()) is not None:  # validation's tools (autoenv.sandbox.toolbox)
                etc[TOOLBOX_MOUNT] = busybox
            config = oci.spec(
                rootfs=self.rootfs,
                init_args=INIT_ARGS,
                env=self.config.env,
                hostname=self.config.hostname,
                etc_files=etc,
                resources=self.config.resources,
                cgroups_path=self.cgroups_path,
            )
            (self.state_dir / "config.json").write_text(json.dumps(config))
            pid_file = self.state_dir / "init.pid"
            # the helper's channel: the pipe pair a detached container's init keeps as its stdin and stdout
            helper_in, to_helper = os.pipe()
            from_helper, helper_out = os.pipe()
            try:
                with open(self.state_dir / "runtime.log", "w") as log:
                    result = subprocess.run(
                        [
                            *self._runtime,
                            "run",
                            "--detach",
                            "--pid-file",
                            str(pid_file),
                            "--bundle",
                            str(self.state_dir),
                            self.id,
                        ],
                        stdin=helper_in,
                        stdout=helper_out,
                        stderr=log,
                        timeout=timeout,
                        cwd="/",
                    )
            finally:
                os.close(helper_in)
                os.close(helper_out)
            self._channel = ExecChannel(to_helper, from_helper, self.id)
            if result.returncode != 0:
                raise SandboxStartError(
                    f"{self.config.runtime} could not start the sandbox: "
                    f"{(self.state_dir / 'runtime.log').read_text().strip()[-2000:]}"
                )
            self._init_pid = int(pid_file.read_text())
            self._channel.wait_ready(timeout)
            if self.config.network:
                self._start_slirp()
        except BaseException:
            self.stop()
            raise

    def _write_etc_files(self) -> dict[str, Path]:
        etc = self.state_dir / "etc"
        name = self.config.hostname
        (etc / "hostname").write_text(name + "\n")
        (etc / "hosts").write_text(
            f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t{name}\n"
        )
        (etc / "resolv.conf").write_text(f"nameserver {SLIRP_DNS}\n" if self.config.network else "")
        return {f"/etc/{n}": etc / n for n in ("hostname", "hosts", "resolv.conf")}

    def _start_slirp(self) -> None:
        """Outbound network through a user-mode TCP/IP stack: the sandbox reaches the
        internet through slirp4netns but not the host's loopback or its unix sockets."""
        if not shutil.which("slirp4netns"):
            raise SandboxError(
                "slirp4netns not found: the local backend needs it for tasks with network access (apt-get install "
                "slirp4netns)"
            )
        read_fd, write_fd = os.pipe()
        self._slirp = subprocess.Popen(
            [
                "slirp4netns",
                "--configure",
                "--mtu=65520",
                "--disable-host-loopback",
                "--ready-fd",
                str(write_fd),
                str(self._init_pid),
                "tap0",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as ready:
            if ready.read(1) != b"1":
                err = (
                    self._slirp.stderr.read().decode(errors="replace")
                    if self._slirp.poll() is not None and self._slirp.stderr
                    else ""
                )
                raise SandboxError(f"slirp4netns failed to configure the sandbox network: {err.strip()[-500:]}")
        (self.state_dir / "slirp.pid").write_text(str(self._slirp.pid))

    def _cleanup_script(self) -> str:
        return cleanup_script(self.id, self.state_dir, self._runtime)

    def _start_reaper(self) -> None:
        # `cat` returns when the pipe's write end (held by this process only) closes: at our
        # exit, whatever kills us, or when stop() closes it after cleaning up itself.
        self._reaper = subprocess.Popen(
            ["/bin/sh", "-c", REAPER_WAITS + self._cleanup_script()],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd="/",
        )

    def stop(self, *, wait: bool = True) -> None:
        """Kill every process, remove the container, its mounts and its writable layer.

        Every process of the sandbox is dead when this returns: closing the helper's channel ends the container's
        init, and the kernel kills the rest of its PID namespace with it. With ``wait=False`` the removal (runtime
        state, mounts, writable layer: ~50 ms of ``runc delete`` and ``umount``) is left to the sandbox's reaper,
        which runs it in the background, so that a trial does not wait for it."""
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
            if self._init_pid is not None:
                wait_gone(self._init_pid, timeout=5.0)
        if self._slirp is not None:
            self._slirp.kill()
            self._slirp.wait()
            self._slirp = None
        reaper, self._reaper = self._reaper, None
        if not wait and reaper is not None and reaper.stdin is not None and reaper.poll() is None:
            reaper.stdin.close()  # the reaper's `cat` returns and it runs the cleanup script
            threading.Thread(target=reaper.wait, name=f"reaper-{self.id}", daemon=True).start()
        else:
            subprocess.run(
                ["/bin/sh", "-c", self._cleanup_script()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
            )
            if reaper is not None:
                reaper.kill()
                reaper.wait()
                if reaper.stdin:
                    reaper.stdin.close()
        self._init_pid = None

    def alive(self) -> bool:
        """Its init (the exec helper) still runs and answers."""
        channel, pid = self._channel, self._init_pid
        return channel is not None and channel.alive and pid is not None and Path(f"/proc/{pid}").exists()

    def processes(self) -> list[int]:
        return cgroup_procs(self.cgroups_path)

    def kill_processes(self, born_since: int | None = None) -> None:
        """Kill everything in the sandbox but its init (a cancelled command, a transfer past its bounds) or, with
        ``born_since``, what a command started then started (a timed-out command, its daemons included), the cgroup
        frozen meanwhile so that nothing forked during the kills survives them."""
        kill_cgroup_but(self.cgroups_path, self._init_pid, born_since=born_since)

    # -- commands ------------------------------------------------------------------

    async def resolve_user(self, user: str | int | None) -> tuple[int, int, tuple[int, ...]]:
        """uid, gid and groups of ``user`` as the sandbox's own /etc/passwd says (never the host's)."""
        if user is None or user == "" or user == 0 or user == "0" or user == "root":
            return 0, 0, ()
        key = str(user)
        if key in self._users:
            return self._users[key]
        name, _, group = key.partition(":")
        script = (
            'id -u "$0" && id -g "$0" && id -G "$0"'
            if not name.isdigit()
            else 'echo "$0"; id -g "$0" 2>/dev/null || echo "$0"; echo'
        )
        result = await self.run(["/bin/sh", "-c", script, name], user=0)
        lines = result.stdout.split("\n")
        if result.return_code != 0 or len(lines) < 2 or not lines[0].strip().isdigit():
            raise SandboxError(f"user {key!r} does not exist in the sandbox: {result.stderr.strip()[:200]}")
        uid, gid = int(lines[0]), int(lines[1])
        groups = tuple(int(g) for g in lines[2].split() if g.isdigit() and int(g) != gid) if len(lines) > 2 else ()
        if group:
            gid = int(group) if group.isdigit() else gid
        self._users[key] = (uid, gid, groups)
        return self._users[key]

    async def run(self, argv: list[str], **options: Any) -> CommandResult:
        """``argv`` in the container (the options of :meth:`_exec`), its output decoded."""
        code, out, err = await self._exec(argv, **options)
        return CommandResult(code, out.decode(errors="replace"), err.decode(errors="replace"))

    async def _exec(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | int | None = 0,
        timeout: float | None = None,
        stdin: bytes | Path | None = None,
    ) -> tuple[int, bytes, bytes]:
        """``argv`` in the container, started by its exec helper with the container's environment (``env`` on
        top, as ``runtime exec --env``): exit code and raw output; on a timeout or cancellation, what it started
        is killed."""
        channel = self._channel
        if channel is None:
            raise SandboxError(f"sandbox {self.id} is not running")
        uid, gid, groups = await self.resolve_user(user)
        since = boot_ticks()
        call = channel.run(
            argv, uid=uid, gid=gid, groups=groups, cwd=cwd or "/", env={**self.config.env, **(env or {})}, stdin=stdin
        )
        try:
            return await (asyncio.wait_for(call, timeout=timeout) if timeout else call)
        except TimeoutError:  # what the command started; the agent's background jobs of earlier commands live on
            await asyncio.to_thread(self.kill_processes, since)
            raise CommandTimeout(f"Command timed out after {timeout} seconds") from None
        except BaseException:  # cancelled (the agent's timeout) or interrupted: everything
            await asyncio.to_thread(self.kill_processes)
            raise

    # -- files: tar streams through the runtime ---------------------------------------

    def _toolbox_script(self, script: str, *args: str) -> list[str]:
        """``sh -c script args`` in which ``"$0" PROGRAM`` runs the toolbox's static busybox (bound read-only into
        every sandbox), never a shell, tar or mkdir the agent could have replaced; without a toolbox on this
        machine, ``$0`` is ``env`` and the image's own programs run."""
        if host_busybox_or_none() is not None:
            return [TOOLBOX_MOUNT, "sh", "-c", script, TOOLBOX_MOUNT, *args]
        return ["/bin/sh", "-c", script, "env", *args]

    async def put_archive(self, archive: bytes | Path, target_dir: str) -> None:
        """Extract a tar (bytes, or a file streamed in pieces) into ``target_dir`` in the sandbox."""
        argv = self._toolbox_script('"$0" mkdir -p -- "$1" && exec "$0" tar -x -f - -C "$1"', target_dir)
        result = await self.run(argv, stdin=archive)
        if result.return_code != 0:
            raise SandboxError(f"could not write into {target_dir} in the sandbox: {result.stderr.strip()[:500]}")

    async def stream_archive(
        self, source: str, archive: Path, *, follow: bool, limits: TransferLimits | None = None
    ) -> None:
        """Write a tar of ``source`` (in the sandbox) to the host file ``archive`` as it streams, within ``limits``.

        Past a bound (bytes, files, seconds) the sandbox's tar is killed at once and :class:`TransferLimitExceeded`
        raised: what the agent left is its own failure, and the harness's memory never holds the stream."""
        limits = limits or TransferLimits()
        parent, name = os.path.split(source.rstrip("/") or "/")
        script = (
            '[ -e "$1/$2" ] || [ -L "$1/$2" ] || { echo "$1/$2: not found" >&2; exit 3; }; '
            f'exec "$0" tar -c{"h" if follow else ""} -f - -C "$1" -- "$2"'
        )
        channel = self._channel
        if channel is None:
            raise SandboxError(f"sandbox {self.id} is not running")
        sink = ArchiveSink(archive, limits)
        call = channel.run(
            self._toolbox_script(script, parent or "/", name or "."),
            uid=0, gid=0, groups=(), cwd="/", env=self.config.env, stdin=None, sink=sink,
        )  # fmt: skip
        try:
            code, _, err = await asyncio.wait_for(call, timeout=limits.seconds)
        except TimeoutError:
            await asyncio.to_thread(self.kill_processes)
            raise TransferLimitExceeded(
                f"copying {source} out of the sandbox took more than {limits.seconds:g} s (bounds: {limits.describe()})"
            ) from None
        except BaseException:
            await asyncio.to_thread(self.kill_processes)
            raise
        finally:
            sink.close()
        if sink.exceeded:
            raise TransferLimitExceeded(
                f"{source} in the sandbox holds {sink.exceeded}, more than a trial copies out "
                f"(bounds: {limits.describe()})"
            )
        if code == 3:
            raise FileNotFoundError(f"{source} not found in the sandbox")
        if code != 0:
            raise SandboxError(
                f"could not read {source} from the sandbox: {err.decode(errors='replace').strip()[:500]}"
            )


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def pack_to(archive: Path, source: Path, arcname: str) -> None:
    """A tar of ``source`` (file or directory contents) owned by root, links kept as links, written to the file
    ``archive`` (streamed into the sandbox in pieces, never held in memory; GNU format, which busybox reads)."""
    with tarfile.open(archive, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(source, arcname=arcname, filter=_owned_by_root)

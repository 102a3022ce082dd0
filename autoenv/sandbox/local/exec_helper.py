"""The host's end of the resident exec helper (``exec_helper.c``), and the helper's build.

A local sandbox's PID 1 is the helper: runc starts it once with the container's whole confinement and every
command afterwards is a fork/exec of it, which inherits that confinement, instead of a ``runc exec`` of 30-50 ms.
Commands and their output travel as frames over the two pipes runc hands to a detached container's init (see the
C file for the format and for who can reach them). :class:`ExecChannel` runs one reader thread per sandbox that
hands each finished command to the event loop that asked for it.

A fault of the helper (it died, it wrote something that is not a frame) is a :class:`SandboxFault`: never a
verdict, never an exit code of the command.

The helper is compiled from source on first use with the host's C compiler, statically (no library of the image's
is loaded into PID 1), into the cache keyed by the source's hash; ``scripts/system-deps.sh`` installs ``gcc`` and
``libc6-dev`` and ``autoenv doctor`` checks the build.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import hashlib
import os
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Protocol

from autoenv.errors import MachineError, SandboxFault
from autoenv.sandbox.local.cache import cache_root

#: Where the helper is bound (read-only) in every local sandbox, as Docker's ``--init`` binds ``/dev/init``.
HELPER_MOUNT = "/dev/autoenv-exec"

_HEAD = struct.Struct("<IcI")
#: The largest frame the host accepts from the helper (it sends output in 64 KiB pieces): anything bigger is a
#: broken or forged channel, not output.
_MAX_FRAME = 1 << 20

#: How much of a command's stdout and of its stderr the host keeps in memory (``AUTOENV_MAX_OUTPUT_MB``): a command
#: that prints more (``cat /dev/zero`` for a minute) has the rest dropped and counted, so that whatever a sandbox
#: prints, the harness's memory stays bounded. Transfers do not go through this: they stream to a file (``sink``).
MAX_OUTPUT_BYTES = int(float(os.environ.get("AUTOENV_MAX_OUTPUT_MB", "16")) * (1 << 20))

#: A stdin larger than this is sent from a thread in pieces of this size, never built as one buffer.
_STDIN_PIECE = 1 << 20


class Sink(Protocol):
    """Where a streamed command's stdout goes (:meth:`ExecChannel.run` with ``sink``), called on the reader thread.

    ``write`` returns False once the consumer wants no more (a bound was passed): the command's process group is
    then killed and the rest of its output dropped."""

    def write(self, data: bytes) -> bool: ...


class HelperGone(SandboxFault):
    """The sandbox's exec helper ended or broke its protocol (the sandbox failed, not the task)."""


def _source() -> bytes:
    return files("autoenv.sandbox.local").joinpath("exec_helper.c").read_bytes()


@functools.cache
def _source_digest() -> str:
    """The helper source's hash, read once per process (every sandbox start asks for the binary)."""
    return hashlib.sha256(_source()).hexdigest()[:16]


def helper_binary() -> Path:
    """The compiled helper for this source, built once per machine (a lock keeps concurrent first uses to one)."""
    digest = _source_digest()
    target = cache_root() / "helper" / f"autoenv-exec-{digest}"
    if target.is_file():
        return target
    source = _source()
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise MachineError(
            "no C compiler: the local backend builds its exec helper once with gcc "
            "(bash scripts/system-deps.sh installs gcc and libc6-dev)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        src = target.parent / f"autoenv-exec-{digest}.c"
        src.write_bytes(source)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        built = subprocess.run(
            [compiler, "-static", "-O2", "-o", str(tmp), str(src)], capture_output=True, text=True, cwd="/"
        )
        if built.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise MachineError(
                f"could not build the local backend's exec helper with {compiler} -static: "
                f"{built.stderr.strip()[-800:]} (bash scripts/system-deps.sh installs gcc and libc6-dev)"
            )
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    return target


@dataclass
class _Pending:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    sink: Sink | None = None
    dropped: int = 0
    killed: bool = False

    def keep(self, buffer: bytearray, payload: bytes) -> None:
        room = MAX_OUTPUT_BYTES - len(buffer)
        if room > 0:
            buffer += payload[:room]
        self.dropped += max(0, len(payload) - max(room, 0))


class ExecChannel:
    """Commands in one sandbox through its helper. ``to_helper``/``from_helper`` are the host's pipe ends."""

    def __init__(self, to_helper: int, from_helper: int, name: str):
        self._to = to_helper
        self._from = from_helper
        self._name = name
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 1
        self._gone: str | None = None
        self._hello = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name=f"exec-helper-{name}", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self._gone is None and self._to >= 0

    def wait_ready(self, timeout: float) -> None:
        """Block until the helper said hello (it runs), or raise :class:`HelperGone`."""
        if not self._hello.wait(timeout) or self._gone:
            raise HelperGone(f"the exec helper of sandbox {self._name} did not start: {self._gone or 'no answer'}")

    async def run(
        self,
        argv: list[str],
        *,
        uid: int,
        gid: int,
        groups: tuple[int, ...],
        cwd: str,
        env: dict[str, str],
        stdin: bytes | Path | None,
        sink: Sink | None = None,
    ) -> tuple[int, bytes, bytes]:
        """Start ``argv`` and wait for it to end: exit code, stdout, stderr. Cancel it with :meth:`forget`.

        ``stdin`` is bytes, or a file sent in pieces. With ``sink`` the stdout goes to it as it comes (the returned
        stdout is empty); otherwise at most :data:`MAX_OUTPUT_BYTES` of each output is kept, and a note of what was
        dropped ends the stderr."""
        loop = asyncio.get_running_loop()
        fields = [
            "1" if stdin is not None else "0",
            str(uid),
            str(gid),
            ",".join(str(g) for g in groups),
            cwd,
            str(len(argv)),
            *argv,
            str(len(env)),
            *(f"{k}={v}" for k, v in env.items()),
        ]
        if any("\0" in f for f in fields):
            raise ValueError("a command, folder or environment value holds a NUL byte")
        payload = b"".join(f.encode() + b"\0" for f in fields)
        with self._lock:
            if self._gone:
                raise HelperGone(f"the exec helper of sandbox {self._name} is gone: {self._gone}")
            rid = self._next_id
            self._next_id += 1
            pending = _Pending(loop, loop.create_future(), sink=sink)
            self._pending[rid] = pending
        frames = [_HEAD.pack(len(payload), b"X", rid) + payload]
        if isinstance(stdin, bytes):
            if stdin:
                frames.append(_HEAD.pack(len(stdin), b"I", rid) + stdin)
            frames.append(_HEAD.pack(0, b"E", rid))
        data = b"".join(frames)
        try:
            if len(data) > 65536:
                await asyncio.to_thread(self._write, data)
            else:
                self._write(data)
            if isinstance(stdin, Path):
                await asyncio.to_thread(self._send_file, rid, stdin)
            return await pending.future
        finally:
            self.forget(rid)

    def _send_file(self, rid: int, path: Path) -> None:
        with open(path, "rb") as source:
            while piece := source.read(_STDIN_PIECE):
                self._write(_HEAD.pack(len(piece), b"I", rid) + piece)
        self._write(_HEAD.pack(0, b"E", rid))

    def kill(self, rid: int) -> None:
        """SIGKILL the command's process group (each command is its own session); its end still arrives."""
        try:
            self._write(_HEAD.pack(0, b"K", rid))
        except HelperGone:
            pass

    def forget(self, rid: int) -> None:
        with self._lock:
            self._pending.pop(rid, None)

    def close(self) -> None:
        """Close the host's ends: the helper sees its stdin close and ends the container's init."""
        fd, self._to = self._to, -1
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass

    # -- the two directions --------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            while view:
                try:
                    n = os.write(self._to, view)
                except OSError as exc:
                    self._fail(f"writing to it failed ({exc.strerror})")
                    raise HelperGone(f"the exec helper of sandbox {self._name} is gone: {self._gone}") from None
                view = view[n:]

    def _read_exactly(self, n: int) -> bytes | None:
        chunks = bytearray()
        while len(chunks) < n:
            try:
                got = os.read(self._from, n - len(chunks))
            except OSError:
                return None
            if not got:
                return None
            chunks += got
        return bytes(chunks)

    def _read_loop(self) -> None:
        try:
            while True:
                head = self._read_exactly(_HEAD.size)
                if head is None:
                    self._fail("its channel closed (the sandbox ended or its init was killed)")
                    return
                length, kind, rid = _HEAD.unpack(head)
                if length > _MAX_FRAME or kind not in b"ORZH":
                    self._fail(f"it sent a frame that is not one (kind {kind!r}, {length} bytes)")
                    return
                payload = self._read_exactly(length) if length else b""
                if payload is None:
                    self._fail("its channel closed in the middle of a frame")
                    return
                self._dispatch(kind, rid, payload)
        finally:
            try:
                os.close(self._from)
            except OSError:
                pass

    def _dispatch(self, kind: bytes, rid: int, payload: bytes) -> None:
        if kind == b"H":
            self._hello.set()
            return
        with self._lock:
            pending = self._pending.get(rid)
            if pending is None:  # a command given up on (timed out, cancelled): its rest is dropped
                return
            if kind == b"O" and pending.sink is not None:
                if not pending.killed and not pending.sink.write(payload):
                    pending.killed = True
                    threading.Thread(target=self.kill, args=(rid,), daemon=True).start()
                return
            if kind == b"O":
                pending.keep(pending.out, payload)
                return
            if kind == b"R":
                pending.keep(pending.err, payload)
                return
            del self._pending[rid]
        try:
            code = int(payload)
        except ValueError:
            code = -1
        if pending.dropped:
            note = f"[autoenv: output over {MAX_OUTPUT_BYTES >> 20} MiB a stream; {pending.dropped} bytes dropped]"
            pending.err += f"\n{note}\n".encode()
        result = (code, bytes(pending.out), bytes(pending.err))
        pending.loop.call_soon_threadsafe(_settle, pending.future, result, None)

    def _fail(self, why: str) -> None:
        with self._lock:
            if self._gone is None:
                self._gone = why
            waiting, self._pending = list(self._pending.values()), {}
        self._hello.set()
        for pending in waiting:
            error = HelperGone(f"the exec helper of sandbox {self._name} is gone: {why}")
            try:
                pending.loop.call_soon_threadsafe(_settle, pending.future, None, error)
            except RuntimeError:  # that loop is closed: nobody is waiting any more
                pass


def _settle(future: asyncio.Future, result: object, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


__all__ = ["HELPER_MOUNT", "MAX_OUTPUT_BYTES", "ExecChannel", "HelperGone", "Sink", "helper_binary"]

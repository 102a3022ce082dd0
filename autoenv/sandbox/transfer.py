"""Bounded collection: what a trial copies out of a sandbox streams to disk, within limits, and fails on the agent.

RL runs thousands of trials unattended, and what the agent leaves in its folders is whatever an exploring policy
made: a 20 GB sparse file, 150,000 empty files, a tree a thousand folders deep. Reading that into the harness's
memory takes the host down (a sparse file is all zeros in a tar stream); extracting it fills the host's disk. So a
transfer out of a sandbox

- streams the archive to a file as it comes (never the whole archive in memory), counting bytes and members as
  they pass (:class:`ArchiveSink`); past a bound the sandbox's tar is killed at once;
- is extracted only once the whole archive is known to be within bounds (depth and names checked first, with
  tarfile's ``data`` filter: no links out, no devices), writing runs of zeros as holes, so a sparse file stays
  sparse on the host;
- fails with :class:`TransferLimitExceeded`, the agent's fault: the trial's verdict is 0 with a reason that names
  the bound, never an exhausted host.

The bounds (:class:`TransferLimits`) default to what a user would expect of one trial's outputs (1 GiB, 100,000
files, 64 levels, 60 s) and can be set per machine with ``AUTOENV_TRANSFER_MAX_MB``, ``..._MAX_FILES``,
``..._MAX_DEPTH`` and ``..._SECONDS``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import tarfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from autoenv.errors import AgentLimitExceeded

_BLOCK = 512
#: tar entries that describe the next one (GNU long names and links, pax headers) rather than being a file
_META_TYPES = frozenset(b"LKxgX")
_PIECE = 1 << 16


class TransferLimitExceeded(AgentLimitExceeded):
    """What the agent left behind is larger than a trial may copy out (bytes, files, depth or time)."""


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


@dataclass(frozen=True)
class TransferLimits:
    """How much one transfer out of a sandbox may carry."""

    max_bytes: int = field(default_factory=lambda: int(_env_number("AUTOENV_TRANSFER_MAX_MB", 1024) * (1 << 20)))
    max_files: int = field(default_factory=lambda: int(_env_number("AUTOENV_TRANSFER_MAX_FILES", 100_000)))
    max_depth: int = field(default_factory=lambda: int(_env_number("AUTOENV_TRANSFER_MAX_DEPTH", 64)))
    seconds: float = field(default_factory=lambda: _env_number("AUTOENV_TRANSFER_SECONDS", 60))

    def describe(self) -> str:
        return f"{self.max_bytes >> 20} MiB, {self.max_files} files, {self.max_depth} folders deep, {self.seconds:g} s"


def _number(field_bytes: bytes) -> int:
    """A tar header's numeric field: octal text, or GNU's base-256 when the top bit is set."""
    if field_bytes and field_bytes[0] & 0x80:
        value = field_bytes[0] & 0x3F
        for byte in field_bytes[1:]:
            value = (value << 8) | byte
        return value
    text = field_bytes.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


class ArchiveSink:
    """A tar stream written to ``path`` as it arrives, with its bytes and members counted against ``limits``.

    ``write`` returns False (and keeps nothing more) once a bound is passed; :attr:`exceeded` then says which.
    The member count reads the tar headers as they pass, so 150,000 empty files stop the stream at the
    100,001st header, not after the whole tree was read."""

    def __init__(self, path: Path, limits: TransferLimits):
        self.path = path
        self.limits = limits
        self.bytes = 0
        self.members = 0
        self.exceeded: str | None = None
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close(), the stream's end
        self._header = bytearray()
        self._skip = 0  # bytes of the current member's data still to pass
        self._ended = False

    def write(self, data: bytes) -> bool:
        if self.exceeded is not None:
            return False
        self.bytes += len(data)
        if self.bytes > self.limits.max_bytes:
            self.exceeded = f"more than {self.limits.max_bytes >> 20} MiB"
            return False
        self._file.write(data)
        self._count(data)
        if self.members > self.limits.max_files:
            self.exceeded = f"more than {self.limits.max_files} files"
            return False
        return True

    def _count(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self._ended:
            if self._skip:
                step = min(self._skip, len(view))
                self._skip -= step
                view = view[step:]
                continue
            need = _BLOCK - len(self._header)
            self._header += view[:need]
            view = view[need:]
            if len(self._header) < _BLOCK:
                return
            header, self._header = bytes(self._header), bytearray()
            if not header.strip(b"\0"):
                self._ended = True  # the end-of-archive blocks
                return
            size = _number(header[124:136])
            self._skip = -(-size // _BLOCK) * _BLOCK
            if header[156] not in _META_TYPES:
                self.members += 1

    def close(self) -> None:
        self._file.close()


def check_archive(archive: Path, limits: TransferLimits) -> None:
    """Raise :class:`TransferLimitExceeded` if a member of ``archive`` lies deeper than the depth bound."""
    with tarfile.open(archive, mode="r|") as tar:
        for member in tar:
            depth = len([p for p in PurePosixPath(member.name).parts if p not in (".", "")])
            if depth > limits.max_depth:
                raise TransferLimitExceeded(f"a path more than {limits.max_depth} folders deep ({member.name[:200]})")


def write_sparse(source: BinaryIO, target: Path, size: int) -> None:
    """Copy ``size`` bytes, seeking over all-zero pieces so that they stay holes on the host's disk."""
    zero = bytes(_PIECE)
    with open(target, "wb") as out:
        left = size
        while left > 0:
            piece = source.read(min(_PIECE, left))
            if not piece:
                break
            if piece == zero[: len(piece)]:
                out.seek(len(piece), os.SEEK_CUR)
            else:
                out.write(piece)
            left -= len(piece)
        out.truncate(size)


def extract_archive(archive: Path, target: Path) -> list[str]:
    """Extract a checked archive into ``target`` with the ``data`` filter (no links out, no devices, no setuid),
    regular files written sparse. Returns why members were refused, as Harbor's ``extract_dir`` does."""
    target.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []
    with tarfile.open(archive, mode="r|") as tar:
        for member in tar:
            try:
                safe = tarfile.data_filter(member, str(target))
            except tarfile.FilterError as exc:
                refused.append(str(exc))
                continue
            if not safe.isfile():
                tar.extract(safe, target, filter="fully_trusted")
                continue
            path = target / safe.name
            source = tar.extractfile(member)
            if source is None:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink() or (path.exists() and not path.is_file()):
                refused.append(f"{safe.name}: would replace a link or folder")
                continue
            write_sparse(source, path, safe.size)
            os.chmod(path, (safe.mode or 0o644) & 0o777)
    return refused


@contextmanager
def scratch_file(near: Path) -> Iterator[Path]:
    """A temporary file beside ``near`` (the host's disk, never memory), removed afterwards."""
    near.parent.mkdir(parents=True, exist_ok=True)
    path = near.parent / f".{near.name}.{uuid.uuid4().hex[:8]}.tar"
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def extract_tree(archive: Path, target: Path) -> None:
    """A folder's archive, within the depth bound, extracted into a staging folder and merged into ``target``."""
    check_archive(archive, TransferLimits())
    staged = staging_dir(target)
    try:
        extract_archive(archive, staged)
        publish_dir(staged, target)
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def extract_one(archive: Path, target: Path) -> None:
    """The one file a file's archive holds, written sparse to ``target`` (replaced whole, never half-written)."""
    with tarfile.open(archive, mode="r|") as tar:
        # the archive of one file holds that file first: a folder (or anything else) there is not a file, and
        # no file inside it may stand in for it (a verifier would get a file where the agent left a folder)
        member = next(iter(tar), None)
        if member is None or not member.isfile():
            raise FileNotFoundError(f"not a regular file in the sandbox: {target.name}")
        source = tar.extractfile(member)
        assert source is not None
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:6]}")
        write_sparse(source, tmp, member.size)
        os.chmod(tmp, member.mode & 0o755 | 0o600)
        os.replace(tmp, target)


async def stream_command(argv: list[str], archive: Path, what: str, limits: TransferLimits | None = None) -> str:
    """Run ``argv`` on the host (e.g. ``docker cp CONTAINER:PATH -``), its stdout, a tar stream, written to the
    file ``archive`` within ``limits``; returns its stderr (the first 64 KiB) when it exits 0.

    Past a bound (bytes, files, seconds) the command is killed at once and :class:`TransferLimitExceeded` raised,
    naming ``what``; a command that fails otherwise is a :class:`RuntimeError` with its stderr. The stream passes
    in 64 KiB pieces, so the harness never holds more of it than that."""
    limits = limits or TransferLimits()
    sink = ArchiveSink(archive, limits)
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    errors = bytearray()

    async def pump() -> None:
        assert process.stdout is not None
        while piece := await process.stdout.read(_PIECE):
            if not sink.write(piece):
                return

    async def drain_errors() -> None:
        assert process.stderr is not None
        while piece := await process.stderr.read(_PIECE):
            errors.extend(piece[: max(0, _PIECE - len(errors))])

    errors_read = asyncio.ensure_future(drain_errors())
    try:
        await asyncio.wait_for(pump(), timeout=limits.seconds)
    except TimeoutError:
        raise TransferLimitExceeded(
            f"copying {what} took more than {limits.seconds:g} s (bounds: {limits.describe()})"
        ) from None
    finally:
        sink.close()
        if process.returncode is None and (sink.exceeded or not process.stdout.at_eof()):
            process.kill()
        await process.wait()
        await errors_read
    if sink.exceeded:
        raise TransferLimitExceeded(
            f"{what} holds {sink.exceeded}, more than a trial copies out (bounds: {limits.describe()})"
        )
    message = errors.decode(errors="replace").strip()
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv[:2])} failed ({process.returncode}): {message[:500]}")
    return message


#: The file in a trial folder that says a transfer passed a bound (the agent's failure), read by the trial runner.
LIMIT_RECORD = "autoenv-limit.txt"


def record_limit(trial_dir: Path, why: str) -> None:
    """Note in the trial folder that what the agent left passed a bound: the trial's verdict is then 0."""
    try:
        trial_dir.mkdir(parents=True, exist_ok=True)
        with open(trial_dir / LIMIT_RECORD, "a") as record:
            record.write(why.replace("\n", " ") + "\n")
    except OSError:
        pass


def read_limit(trial_dir: Path) -> str | None:
    """Why a transfer of this trial passed a bound, or None."""
    try:
        text = (trial_dir / LIMIT_RECORD).read_text().strip()
    except OSError:
        return None
    return text.splitlines()[0] if text else None


def publish_dir(staged: Path, target: Path) -> None:
    """Move what ``staged`` holds into ``target`` (merged: the trial's log folders may exist already)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in staged.iterdir():
        destination = target / entry.name
        if destination.is_dir() and not destination.is_symlink() and entry.is_dir() and not entry.is_symlink():
            publish_dir(entry, destination)
            continue
        if destination.is_dir() and not destination.is_symlink():
            shutil.rmtree(destination)
        elif destination.exists() or destination.is_symlink():
            destination.unlink()
        os.replace(entry, destination)


def staging_dir(near: Path) -> Path:
    """A fresh folder beside ``near`` (same filesystem, so publishing is a rename)."""
    near.parent.mkdir(parents=True, exist_ok=True)
    path = near.parent / f".{near.name}.incoming-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    return path


__all__ = [
    "LIMIT_RECORD",
    "ArchiveSink",
    "TransferLimitExceeded",
    "TransferLimits",
    "check_archive",
    "extract_archive",
    "extract_one",
    "extract_tree",
    "publish_dir",
    "read_limit",
    "record_limit",
    "scratch_file",
    "staging_dir",
    "stream_command",
    "write_sparse",
]

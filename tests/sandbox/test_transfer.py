"""Bounded collection's pieces on real tar archives: counting members as the stream passes, refusing a folder where a
file was asked for, sparse extraction (the trials that use them are in tests/redteam/test_trial_bounds.py)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from autoenv.sandbox.transfer import (
    ArchiveSink,
    TransferLimitExceeded,
    TransferLimits,
    check_archive,
    extract_one,
    extract_tree,
)


def _tar(path: Path, members: dict[str, bytes | None]) -> Path:
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def test_the_sink_counts_members_as_they_pass_and_stops_past_the_bound(tmp_path):
    names = {f"d/{'x' * 150}{i}": b"" for i in range(12)}  # long names: GNU 'L' entries do not count as files
    data = _tar(tmp_path / "a.tar", {"d": None, **names}).read_bytes()
    sink = ArchiveSink(tmp_path / "out.tar", TransferLimits(max_files=20))
    for i in range(0, len(data), 1000):  # pieces that cut headers anywhere
        assert sink.write(data[i : i + 1000])
    sink.close()
    assert sink.members == 13 and sink.exceeded is None
    small = ArchiveSink(tmp_path / "out2.tar", TransferLimits(max_files=5))
    assert not small.write(data) and small.exceeded == "more than 5 files"


def test_a_folder_is_not_a_file_and_depth_is_bounded(tmp_path):
    archive = _tar(tmp_path / "dir.tar", {"app": None, "app/inner.txt": b"x"})
    with pytest.raises(FileNotFoundError):
        extract_one(archive, tmp_path / "got" / "app")
    assert not (tmp_path / "got" / "app").exists()
    deep = _tar(tmp_path / "deep.tar", {"/".join(["d"] * 70) + "/f": b"x"})
    with pytest.raises(TransferLimitExceeded, match="64 folders deep"):
        check_archive(deep, TransferLimits())


def test_zeros_are_extracted_as_holes(tmp_path):
    archive = _tar(tmp_path / "z.tar", {"./zeros.bin": bytes(8 << 20), "./data.bin": b"hello"})
    extract_tree(archive, tmp_path / "out")
    zeros = tmp_path / "out" / "zeros.bin"
    assert zeros.stat().st_size == 8 << 20 and zeros.stat().st_blocks * 512 < 1 << 20
    assert (tmp_path / "out" / "data.bin").read_bytes() == b"hello"


def test_a_host_command_s_stream_stops_at_each_bound_and_is_killed(tmp_path):
    """``stream_command`` (Docker's ``docker cp ... -``) on real processes: an endless stream stops at the byte bound,
    a silent one at the time bound, each killed at once; a complete one is kept; a failure says its stderr."""
    import asyncio
    import time

    from autoenv.sandbox.transfer import stream_command

    limits = TransferLimits(max_bytes=1 << 20, max_files=10, max_depth=4, seconds=2)
    endless = ["cat", "/dev/zero"]  # a tar stream of end blocks that never ends
    with pytest.raises(TransferLimitExceeded, match="more than 1 MiB"):
        asyncio.run(stream_command(endless, tmp_path / "a.tar", "the endless stream", limits))
    assert (tmp_path / "a.tar").stat().st_size <= 1 << 20
    started = time.monotonic()
    with pytest.raises(TransferLimitExceeded, match="more than 2 s"):
        asyncio.run(stream_command(["sleep", "60"], tmp_path / "b.tar", "the silent stream", limits))
    assert time.monotonic() - started < 10  # killed, not waited for
    source = _tar(tmp_path / "src.tar", {"d": None, "d/f": b"data"})
    asyncio.run(stream_command(["cat", str(source)], tmp_path / "c.tar", "a tar", limits))
    assert (tmp_path / "c.tar").read_bytes() == source.read_bytes()
    with pytest.raises(RuntimeError, match="Could not find"):
        asyncio.run(stream_command(["sh", "-c", "echo Could not find >&2; exit 1"], tmp_path / "d.tar", "x", limits))

"""The archive node: /app holds access.pack and unpack.py only (tests/test.sh removed all else, and the log), and
unpack.py, run as nobody, must write the log back byte for byte; both files together fit in the space the node has."""

import lzma
import os
import stat
from pathlib import Path

from agentcall import agent_folder, run_agent  # the agent's program runs as nobody

HERE = Path(__file__).parent
LIMIT = int("__LIMIT__")
FILES = ("/app/access.pack", "/app/unpack.py")


def sizes():
    """The two files' sizes; a link or anything but a plain file is no archive."""
    found = {}
    for name in FILES:
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            raise AssertionError(f"{name} does not exist") from None
        assert stat.S_ISREG(info.st_mode), f"{name} is not a plain file"
        found[name] = info.st_size
    return found


def test_the_archive_and_the_program_fit_in_the_space():
    found = sizes()
    assert sum(found.values()) <= LIMIT, f"{found}: {sum(found.values())} bytes in all, more than the {LIMIT} free"


def test_unpack_writes_the_log_back_byte_for_byte():
    sizes()
    log = lzma.decompress((HERE / "access.log.xz").read_bytes())
    work = agent_folder(writable=True)
    out = work / "out.log"
    done = run_agent(["sh", "-c", 'exec python3 /app/unpack.py /app/access.pack > "$0"', str(out)], cwd="/",
                     timeout=120)  # fmt: skip
    assert done.returncode == 0, f"unpack.py exited {done.returncode}: {done.stderr[-1500:]!r}"
    fd = os.open(out, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        assert stat.S_ISREG(os.fstat(fh.fileno()).st_mode), "the output is not a plain file"
        got = fh.read(len(log) + 1)
    if got != log:
        want_lines, got_lines = log.split(b"\n"), got.split(b"\n")
        same = min(len(want_lines), len(got_lines))
        n = next((i for i, (a, b) in enumerate(zip(want_lines, got_lines)) if a != b), same)
        raise AssertionError(
            f"the output ({len(got)} bytes) is not the log ({len(log)} bytes); first difference at line {n + 1}:\n"
            f"log:    {want_lines[n][:300] if n < len(want_lines) else b'(end)'!r}\n"
            f"output: {got_lines[n][:300] if n < len(got_lines) else b'(end)'!r}"
        )

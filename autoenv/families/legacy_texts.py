"""The texts a legacy-tool level's task carries (:mod:`autoenv.families.legacy_tool` fills them in): the end of
every replacement (C's ``fgets`` and the tools' shared command line), the tests, and the archive level's comparison
of a replacement with every archived run."""

#: The archive level's check of a replacement against every archived run (reference solution and scripted solver).
COMPARE_WITH_ARCHIVE = """\
for run in {archive}/*/; do
  input="$run/input"; [ -e "$input" ] || input=/nonexistent/input
  status=0; python3 {replacement} "$input" > /tmp/replacement.out 2>/dev/null || status=$?
  if cmp -s /tmp/replacement.out "$run/stdout" && [ "$status" = "$(cat "$run/status")" ]; then echo "same: $run"
  else echo "differs: $run"; fi
done
"""

#: What every replacement ends with: how C's ``fgets`` reads lines (the family's program sets ``LINE_MAX``), and the
#: command line the C tools share: ``--version``, a usage error (1), a file it cannot open (2; a folder opens and
#: reads as empty, as C's ``fopen`` does), else the family's ``report`` and its status.
MAIN = """

def chunks(data):
    \"\"\"The pieces fgets(buf, LINE_MAX) reads: through a newline, or LINE_MAX - 1 bytes, whichever comes first.\"\"\"
    at = 0
    while at < len(data):
        end = data.find(b"\\n", at, at + LINE_MAX - 1)
        stop = end + 1 if end >= 0 else min(at + LINE_MAX - 1, len(data))
        yield data[at:stop]
        at = stop


def main(argv):
    if len(argv) == 2 and argv[1] == "--version":
        sys.stdout.write("{name} {version}\\n")
        return 0
    if len(argv) != 2:
        sys.stderr.write("usage: {name} {argument}\\n")
        return 1
    try:
        with open(argv[1], "rb") as source:
            data = source.read()
    except IsADirectoryError:  # C's fopen opens a folder; its first read fails, as at the end of a file
        data = b""
    except OSError:
        sys.stderr.write("{name}: cannot open %s\\n" % argv[1])
        return 2
    stdout, status = report(data)
    sys.stdout.buffer.write(stdout)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
"""

#: The tests of every legacy level: each hidden input's bytes and status as the tool's, and no ELF file in /app.
TESTS = '''\
"""The replacement, run as nobody on __INPUTS__ the solver never saw, against the legacy tool's own output."""

import base64
import json
import os
import stat
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's program runs as nobody

EXPECTED = json.loads(__EXPECTED__)
HERE = Path(__file__).parent


def read_output(path, limit):
    """At most ``limit`` bytes of the file the program's output went to, never through a link, a FIFO or anything
    but a plain file the program may have put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""


def run_program(data, limit):
    """stdout (bytes, at most ``limit``) and exit status of the replacement on ``data`` (None: a path that does not
    exist)."""
    work = agent_folder({"input": data} if data is not None else {}, writable=True)
    path = work / ("input" if data is not None else "missing")
    out = work / "stdout.bin"
    done = run_agent(["sh", "-c", 'exec python3 __REPLACEMENT__ "$0" > "$1"', str(path), str(out)], cwd="/app",
                     timeout=60)
    return read_output(out, limit), done.returncode


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_output_as_the_legacy_tool(name):
    want = EXPECTED[name]
    data = None if want["file"] is None else (HERE / name).read_bytes()
    expected = base64.b64decode(want["stdout"])
    stdout, status = run_program(data, len(expected) + 1)
    assert status == want["status"], f"{name}: exit status {status}, __NAME__ exits {want['status']}"
    assert stdout == expected, (
        f"{name}: the output differs from __NAME__'s:\\n{stdout[:1500]!r}\\n__NAME__ printed:\\n{expected[:1500]!r}"
    )


def test_no_executable_binary_is_left_in_app():
    """The tool is retired: a copy of it (or any ELF program) under /app does not count as a replacement."""
    # run as nobody, who runs the replacement: what nobody cannot read it may still execute (a binary of mode 0711)
    # or reach by name (a folder of mode 0711), so such a file or folder counts as a binary left behind
    scan = (
        "import os\\n"
        "found = []\\n"
        "unlisted = lambda error: found.append(error.filename + ' (a folder nobody can list)')\\n"
        "for root, dirs, files in os.walk('/app', onerror=unlisted):\\n"
        "    for f in files:\\n"
        "        p = os.path.join(root, f)\\n"
        "        try:\\n"
        "            if os.path.isfile(p) and not os.path.islink(p):\\n"
        "                if not os.access(p, os.R_OK):\\n"
        "                    if os.access(p, os.X_OK):\\n"
        "                        found.append(p + ' (executable, unreadable)')\\n"
        "                    continue\\n"
        "                with open(p, 'rb') as fh:\\n"
        "                    head = fh.read(4)\\n"
        "                if head == b'\\\\x7fELF':\\n"
        "                    found.append(p)\\n"
        "        except OSError:\\n"
        "            pass\\n"
        "print('\\\\n'.join(found))\\n"
    )
    done = run_agent(["python3", "-I", "-c", scan], cwd="/", text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip(), f"ELF programs under /app: {done.stdout.strip()}"
'''

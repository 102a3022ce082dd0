"""log-parse level 5: retire a legacy C tool whose behaviour is the specification.

The earlier levels tell the rules (or put them in a file a careful solver reads first), and a capable model passes
them nearly always (bench/README). Here nothing is told: the task ships ``/usr/local/bin/logsum``, a stripped
static binary built from ``files/logsum.c`` with three numbers drawn per task (its line buffer, its name buffer,
its service table), and asks for ``/app/logsum.py`` printing the same bytes for any log. What a 2003 C program
does with long lines, NUL bytes, long or non-ASCII names, 32-bit sums, level prefixes and a full table is found
only by running it on such input; the tests run the replacement on hidden logs made of exactly those corners,
with the tool and its licence removed first (a copy of the binary in /app cannot run, and is refused).

The expected outputs are the real binary's, run on this machine at generation (a build without the licence
check): the reference solution (``files/legacy_program.py``, also what the scripted solver writes once it has
probed the three numbers) passing validation is what shows it matches the C program on those corners.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import shutil
import subprocess
import tempfile
import textwrap
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import LOCK_VERDICT, TaskDraft, dockerfile, pytest_test_sh, solve_sh, task_name, task_toml
from autoenv.families.solver import fill_program
from autoenv.grading import AGENTCALL

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

FILES = Path(__file__).with_name("files")
SOURCE = FILES / "logsum.c"
#: The replacement in Python (reference solution and scripted solver alike), with a ``PARAMS`` line to fill.
PROGRAM = FILES / "legacy_program.py"
TOOL = "/usr/local/bin/logsum"
LICENCE = "/etc/logsum/licence"
#: The three compile-time numbers, drawn per task: what the solver has to find by running the tool.
CHOICES = {"line_max": (96, 112, 128, 160), "svc_len": (9, 10, 11, 13), "max_svc": (12, 14, 16, 20)}
#: One marker every level-5 instruction has (the recipe and ``read_level`` know the level by it).
MARKER = "the legacy `logsum`"

SERVICES = ["auth", "billing", "search", "gateway", "mailer", "reports", "ledger", "tokens"]
LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]
MESSAGES = ["request served", "cache miss", "retrying upstream", "user login", "query slow", "job finished"]


class NoCompiler(RuntimeError):
    """log-parse level 5 builds its legacy tool with the host's C compiler, and there is none."""


@functools.cache
def build(line_max: int, svc_len: int, max_svc: int, *, licence: bool = True) -> bytes:
    """The tool compiled with these numbers (static, stripped): what the task ships, or with ``licence=False``
    the build the generator runs here to know the answers."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise NoCompiler(
            "log-parse level 5 compiles its legacy tool (autoenv/families/log_parse/files/logsum.c) with gcc, and "
            "this machine has no C compiler: bash scripts/system-deps.sh installs gcc and libc6-dev"
        )
    defines = [f"-DLINE_MAX_={line_max}", f"-DSVC_LEN={svc_len}", f"-DMAX_SVC={max_svc}"]
    with tempfile.TemporaryDirectory(prefix="autoenv-logsum-") as tmp:
        out = Path(tmp) / "logsum"
        argv = [compiler, "-std=c99", "-O2", "-static", "-s", *defines, *([] if licence else ["-DNO_LICENCE"])]
        done = subprocess.run([*argv, "-o", str(out), str(SOURCE)], capture_output=True, text=True)
        if done.returncode != 0:
            problem = done.stderr.strip()[-600:]
            raise NoCompiler(f"{SOURCE} did not compile: {problem} (libc6-dev has the static C library)")
        return out.read_bytes()


def run_tool(params: dict[str, int], log: bytes | None) -> tuple[bytes, int]:
    """The legacy tool's standard output and exit status for ``log`` (None: a path that does not exist)."""
    binary = build(params["line_max"], params["svc_len"], params["max_svc"], licence=False)
    with tempfile.TemporaryDirectory(prefix="autoenv-logsum-") as tmp:
        tool = Path(tmp) / "logsum"
        tool.write_bytes(binary)
        tool.chmod(0o755)
        path = Path(tmp) / ("in.log" if log is not None else "missing.log")
        if log is not None:
            path.write_bytes(log)
        done = subprocess.run([str(tool), str(path)], capture_output=True, timeout=60)
    return done.stdout, done.returncode


def program(params: dict[str, int]) -> str:
    """``/app/logsum.py`` for a tool built with ``params``."""
    return fill_program(PROGRAM.read_text(), params)


def line(ts: datetime, level: str, service: str, pid: int, ms: int | str, msg: str) -> str:
    """One record as the services write it (the tool's one layout)."""
    return f'[{ts:%Y-%m-%d %H:%M:%S}] {level} {service} pid={pid} {ms}ms "{msg}"'


def sample_log(rng: random.Random, services: list[str], start: datetime) -> str:
    """The log shipped in /app/logs: ordinary records and the usual malformed ones, none of the hidden corners
    (short lines, short ASCII names, small numbers, fewer services than the tool tracks)."""
    lines, ts = [], start
    for _ in range(rng.randint(180, 320)):
        ts += timedelta(seconds=rng.randint(1, 60))
        good = line(ts, rng.choices(LEVELS, [2, 10, 3, 2])[0], rng.choice(services), rng.randint(100, 9999),
                    rng.randint(1, 900), rng.choice(MESSAGES))  # fmt: skip
        roll = rng.random()
        if roll < 0.03:
            lines.append(good[: rng.randint(8, 30)])  # a truncated write
        elif roll < 0.05:
            lines.append(good.replace(" INFO ", " info ").replace(" ERROR ", " error "))
        elif roll < 0.06:
            lines.append("Traceback (most recent call last):")
        elif roll < 0.08:
            lines.append("")
        else:
            lines.append(good)
    return "\n".join(lines) + "\n"


def hidden_logs(rng: random.Random, params: dict[str, int], services: list[str], start: datetime) -> dict[str, Any]:
    """The logs the tests run the replacement on, one corner each (None: a path that does not exist)."""
    line_max, keep, table = params["line_max"], params["svc_len"] - 1, params["max_svc"]
    ts = [start]

    def at() -> datetime:
        ts[0] += timedelta(seconds=rng.randint(1, 30))
        return ts[0]

    def rec(level: str = "INFO", service: str | None = None, ms: int | str | None = None, msg: str = "ok") -> str:
        return line(at(), level, service or rng.choice(services), rng.randint(100, 999),
                    rng.randint(1, 500) if ms is None else ms, msg)  # fmt: skip

    def padded(total: int, **kw: Any) -> str:
        """A record whose line (without its newline) is ``total`` bytes long."""
        base = rec(msg="", **kw)
        return base[:-1] + "x" * max(0, total - len(base)) + '"'

    # the line buffer: lines on both sides of its size, and one whose cut falls where a whole record starts
    head = rec("WARN", services[1], 5, "")[:-1]  # its message left open: the tool never reads it
    smuggled = head + "y" * (line_max - 1 - len(head)) + rec("ERROR", services[0], 77, "inner")
    long_lines = [padded(n) for n in (line_max - 3, line_max - 2, line_max - 1, line_max, line_max + 7)]
    long_lines += [padded(2 * line_max + 11, level="ERROR"), smuggled, rec()]
    # the name buffer: names at, over and far over its size (two become one), upper case, a UTF-8 name cut inside
    stem = (services[2] + "frontendcluster")[: keep + 6]
    names = [stem[:keep], stem[: keep + 1], stem, services[2].capitalize(), services[2], "zürich" + "é" * keep]
    name_lines = [rec(rng.choice(LEVELS), name) for name in names for _ in range(rng.randint(1, 3))]
    # 32-bit durations: the largest, one past it, a sum that wraps, leading zeros
    numbers = [rec("INFO", services[3], ms) for ms in ("4294967295", "4294967296", "0007", "99999999999")]
    numbers += [rec("WARN", services[-2], 3_000_000_000) for _ in range(2)] + [rec("ERROR", services[-2], 12)]
    # level names by prefix, in any case
    level_lines = [rec(lv) for lv in ("WARNING", "ERRORS", "INFORMATION", "DEBUGGING", "Warn", "ERR", "info", "WARN")]
    # bytes: NUL after and before the duration, a line starting with NUL, \r\r\n, spaces, a tab, a lone \r\n
    good = rec("ERROR", services[-1], 41, "nul after")
    bad = rec("ERROR", services[-1], 42, "nul before")
    cut = bad.index("42ms")
    raw = [
        good.encode() + b"\0tail",
        bad[:cut].encode() + b"\0" + bad[cut:].encode(),
        b"\0" + rec("INFO").encode(),
        rec("WARN", services[-1], 9).encode() + b"\r\r",
        b"     ",
        b"\t",
        rec("INFO").replace("ms ", "ms\t").encode(),
        b"\r",
        rec("DEBUG", services[-1], 1, "caf\xc3\xa9 \xff\xfe").encode(),
    ]
    # the service table: more services than it holds, with ties in the counts
    many = [f"svc{i:02d}" for i in range(table + 6)]
    rng.shuffle(many)
    many_lines = [rec("INFO", name, 10 + i) for i, name in enumerate(many) for _ in range(1 + i % 3)]
    crlf = "".join(rec(rng.choice(LEVELS)) + "\r\n" for _ in range(12))
    return {
        "long_lines.log": ("\n".join(long_lines) + "\n").encode(),
        "names.log": ("\n".join(name_lines) + "\n").encode(),
        "numbers.log": ("\n".join(numbers) + "\n").encode(),
        "levels.log": ("\n".join(level_lines) + "\n").encode(),
        "bytes.log": b"\n".join(raw) + b"\n",
        "many_services.log": ("\n".join(many_lines) + "\n").encode(),
        "crlf.log": crlf.encode(),
        "empty.log": b"",
        "blank_lines.log": b"\n\r\n\n",
        "no_newline_at_end.log": rec("ERROR").encode(),
        "missing.log": None,
    }


def instruction(services: list[str]) -> str:
    return textwrap.dedent(f"""\
        # Retire the legacy `logsum`

        The operations team summarises the services' logs ({", ".join(services)}, ...) with
        the legacy `logsum` tool, a C program from 2003 whose source is lost: `{TOOL} LOG` prints a report of
        the log file `LOG` to standard output. The tool is being removed from every machine, and nobody has
        ever written down what it does.

        Write `/app/logsum.py`, a replacement such that `python3 /app/logsum.py LOG` prints exactly what
        `logsum LOG` prints, byte for byte, and exits with the same status, for **any** file `LOG` the
        services may write, including the odd ones: very long lines, NUL and other stray bytes, numbers too
        large for the tool, service names of any length and in any bytes, more services than the tool can
        keep track of, a file that is empty or does not exist. What it writes to standard error does not matter.

        - A sample of the services' logs is in `/app/logs/app.log`; `logsum` is installed here, so you can
          run it on any file you like.
        - The tests run your program on other logs, on a machine where `logsum` and its licence
          (`{LICENCE}`) are gone: your program must not run `logsum` or a copy of it (no executable
          binary may be left under `/app`).
        - Use the Python 3 standard library only.
        """)


TESTS = '''\
"""The replacement, run as nobody on logs the solver never saw, against the legacy tool's own output."""

import base64
import json
import os
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's program runs as nobody

EXPECTED = json.loads(__EXPECTED__)
HERE = Path(__file__).parent


def run_program(log):
    """stdout (bytes) and exit status of the replacement on ``log`` (None: a path that does not exist)."""
    work = agent_folder({"in.log": log} if log is not None else {}, writable=True)
    path = work / ("in.log" if log is not None else "missing.log")
    out = work / "stdout.bin"
    done = run_agent(["sh", "-c", 'exec python3 /app/logsum.py "$0" > "$1"', str(path), str(out)], cwd="/app",
                     timeout=60)
    return (out.read_bytes() if out.exists() else b""), done.returncode


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_report_as_the_legacy_tool(name):
    want = EXPECTED[name]
    log = None if want["log"] is None else (HERE / name).read_bytes()
    stdout, status = run_program(log)
    assert status == want["status"], f"{name}: exit status {status}, logsum exits {want['status']}"
    expected = base64.b64decode(want["stdout"])
    assert stdout == expected, (
        f"{name}: the report differs from logsum's:\\n{stdout[:1500]!r}\\nlogsum printed:\\n{expected[:1500]!r}"
    )


def test_no_executable_binary_is_left_in_app():
    """The tool is retired: a copy of it (or any ELF program) under /app does not count as a replacement."""
    scan = (
        "import os, sys\\n"
        "found = []\\n"
        "for root, dirs, files in os.walk('/app'):\\n"
        "    for f in files:\\n"
        "        p = os.path.join(root, f)\\n"
        "        try:\\n"
        "            if os.path.isfile(p) and not os.path.islink(p):\\n"
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


def tests_text(expected: dict[str, Any]) -> str:
    return TESTS.replace("__EXPECTED__", repr(json.dumps(expected, sort_keys=True)))


def test_sh(support: list[str]) -> str:
    """The family's graded pytest run (:func:`~autoenv.families.base.pytest_test_sh`), after removing the tool and
    its licence from the grading machine."""
    retire = f"# the legacy tool is retired: no copy of it runs without its licence\nrm -f {TOOL} {LICENCE}\n"
    return pytest_test_sh(*support).replace(LOCK_VERDICT, LOCK_VERDICT + retire, 1)


def generate(case: SeedCase, rng: random.Random, *, family: str, category: str, tags: list[str]) -> TaskDraft:
    """A level-5 task: the tool built with drawn numbers, a sample log, hidden logs and the tool's own reports."""
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    services = sorted(rng.sample(SERVICES, rng.randint(4, 6)))
    start = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 12), 0, 0)
    sample = sample_log(rng, services, start)
    hidden = hidden_logs(rng, params, services, start + timedelta(days=1))
    hidden["app.log"] = sample.encode()
    expected = {}
    for name, log in hidden.items():
        stdout, status = run_tool(params, log)
        shown = base64.b64encode(stdout).decode()
        expected[name] = {"log": None if log is None else name, "stdout": shown, "status": status}
    support = sorted(name for name, log in hidden.items() if log is not None)
    solution = solve_sh(
        "cat > /app/logsum.py <<'LOGSUM'\n"
        + program(params)
        + "LOGSUM\n"
        + "python3 /app/logsum.py /app/logs/app.log | cmp - <(logsum /app/logs/app.log) && echo same report\n"
    )
    secret = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    docker = dockerfile() + f"COPY legacy/logsum {TOOL}\nCOPY legacy/licence {LICENCE}\n"
    files: dict[str, str | bytes] = {
        "instruction.md": instruction(services),
        "task.toml": task_toml(
            family=family,
            seed_case=case.id,
            category=category,
            tags=tags,
            difficulty="hard",
            agent_timeout=900.0,
            verifier_timeout=300.0,
        ),  # fmt: skip
        "environment/Dockerfile": docker,
        "environment/app/logs/app.log": sample,
        "environment/legacy/logsum": build(params["line_max"], params["svc_len"], params["max_svc"]),
        "environment/legacy/licence": f"logsum 2.3 site licence {secret}\n",
        "solution/solve.sh": solution,
        "tests/test.sh": test_sh(support),
        "tests/test_outputs.py": tests_text(expected),
        "tests/agentcall.py": AGENTCALL,
        **{f"tests/{name}": hidden[name] for name in support},
    }
    return TaskDraft(
        name=task_name(family, rng, "legacy-logsum"),
        family=family,
        files=files,
        executable={"environment/legacy/logsum"},
        params={
            "legacy": params,
            "services": len(services),
            "output_path": None,
            "stale_output": None,
            "leak_hint": None,
        },
    )

"""csv-stat level 6: retire a legacy C tool whose behaviour is the specification.

Levels 2-5 tell their rules (in the instruction, or in a data dictionary a careful solver reads first). Here nothing
is told: the task ships ``/usr/local/bin/grpstat``, a stripped static binary built from ``files/grpstat.c`` with
three numbers drawn per task (its line buffer, its group-name buffer, its group table) and the domain's column
names and final status, and asks for ``/app/grpstat.py`` printing the same bytes for any extract. What a 2001 C
program does with long lines, NUL bytes, commas inside quotes, header names in other cases, long or non-ASCII names,
numbers as strtod reads them, 32-bit float sums and a full table is found only by running it on such input; the
tests run the replacement on hidden extracts made of exactly those corners, with the tool and its licence removed
first (a copy of the binary in /app cannot run, and is refused).

The expected outputs are the real binary's, run on this machine at generation (a build without the licence
check): the reference solution (``files/legacy_program.py``, also what the scripted solver writes once it has
probed the numbers and names) passing validation is what shows it matches the C program on those corners.
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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import LOCK_VERDICT, TaskDraft, dockerfile, pytest_test_sh, solve_sh, task_name, task_toml
from autoenv.families.solver import fill_program
from autoenv.grading import AGENTCALL

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

FILES = Path(__file__).with_name("files")
SOURCE = FILES / "grpstat.c"
#: The replacement in Python (reference solution and scripted solver alike), with a ``PARAMS`` line to fill.
PROGRAM_TEXT = FILES / "legacy_program.py"
PROGRAM = "/app/grpstat.py"
TOOL = "/usr/local/bin/grpstat"
LICENCE = "/etc/grpstat/licence"
#: The three compile-time numbers, drawn per task: what the solver has to find by running the tool. Every name of
#: the family's domains (8 bytes at most) fits the shortest name buffer, and a sample's groups the smallest table.
CHOICES = {"line_max": (64, 80, 96, 128), "name_len": (10, 12, 14, 16), "max_groups": (8, 10, 12, 16)}
#: The tool's fixed field limit (files/grpstat.c's MAX_FIELDS), not drawn.
MAX_FIELDS = 16
#: One marker every level-6 instruction has (the recipe knows the level by it).
MARKER = "the legacy `grpstat`"
OTHER_STATUSES = ["error", "retry", "void"]
BAD_VALUES = ["", "NA", "n/a", "-", "null", "?"]


class NoCompiler(RuntimeError):
    """csv-stat level 6 builds its legacy tool with the host's C compiler, and there is none."""


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.cache
def build(line_max: int, name_len: int, max_groups: int, group: str, value: str, ok: str, *, licence: bool = True):
    """The tool compiled with these numbers and names (static, stripped): what the task ships, or with
    ``licence=False`` the build the generator runs here to know the answers."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise NoCompiler(
            "csv-stat level 6 compiles its legacy tool (autoenv/families/csv_stat/files/grpstat.c) with gcc, and "
            "this machine has no C compiler: bash scripts/system-deps.sh installs gcc and libc6-dev"
        )
    defines = [f"-DLINE_MAX_={line_max}", f"-DNAME_LEN={name_len}", f"-DMAX_GROUPS={max_groups}"]
    defines += [f"-DGROUP_COL={c_string(group)}", f"-DVALUE_COL={c_string(value)}", f"-DOK_STATUS={c_string(ok)}"]
    with tempfile.TemporaryDirectory(prefix="autoenv-grpstat-") as tmp:
        out = Path(tmp) / "grpstat"
        argv = [compiler, "-std=c99", "-O2", "-static", "-s", *defines, *([] if licence else ["-DNO_LICENCE"])]
        done = subprocess.run([*argv, "-o", str(out), str(SOURCE)], capture_output=True, text=True)
        if done.returncode != 0:
            problem = done.stderr.strip()[-600:]
            raise NoCompiler(f"{SOURCE} did not compile: {problem} (libc6-dev has the static C library)")
        return out.read_bytes()


def binary(params: dict[str, Any], *, licence: bool = True) -> bytes:
    keys = ("line_max", "name_len", "max_groups", "group", "value", "ok")
    return build(*(params[key] for key in keys), licence=licence)


def run_tool(params: dict[str, Any], data: bytes | None) -> tuple[bytes, int]:
    """The legacy tool's standard output and exit status for ``data`` (None: a path that does not exist)."""
    tool_bytes = binary(params, licence=False)
    with tempfile.TemporaryDirectory(prefix="autoenv-grpstat-") as tmp:
        tool = Path(tmp) / "grpstat"
        tool.write_bytes(tool_bytes)
        tool.chmod(0o755)
        path = Path(tmp) / ("in.csv" if data is not None else "missing.csv")
        if data is not None:
            path.write_bytes(data)
        done = subprocess.run([str(tool), str(path)], capture_output=True, timeout=60)
    return done.stdout, done.returncode


def program(params: dict[str, Any]) -> str:
    """``/app/grpstat.py`` for a tool built with ``params``."""
    return fill_program(PROGRAM_TEXT.read_text(), params)


def reference(params: dict[str, Any], *, float32: bool = True) -> Callable[[bytes], tuple[bytes, int]]:
    """The reference program's ``report`` (stdout, status) for a tool built with ``params``; ``float32=False``: the
    same program summing in double precision (what a replacement that never saw the float corners computes)."""
    scope: dict[str, Any] = {}
    source = program(params).replace('if __name__ == "__main__":', "if False:")
    exec(compile(source, "grpstat.py", "exec"), scope)  # noqa: S102 - the family's own reference
    if not float32:
        scope["f32"] = float
    return scope["report"]


def sample_csv(rng: random.Random, spec: dict[str, Any]) -> str:
    """The extract shipped in /app/data: ordinary rows, the usual invalid values and statuses, none of the hidden
    corners (short lines, the domain's own short ASCII names, plain two-decimal numbers, fewer groups than the
    table holds)."""
    group, value, ok, groups, (mu, sd) = spec["group"], spec["value"], spec["ok"], spec["groups"], spec["mu_sd"]
    lines = [f"id,{group},{value},status"]
    for i in range(rng.randint(180, 320)):
        g = rng.choice(groups)
        x = rng.gauss(mu + groups.index(g) * sd * 0.3, sd)
        raw = f"{x:.2f}" if rng.random() > 0.06 else rng.choice(BAD_VALUES)
        status = ok if rng.random() > 0.1 else rng.choice(OTHER_STATUSES)
        lines.append(f"{spec['prefix']}{i + 1:05d},{g},{raw},{status}")
    return "\n".join(lines) + "\n"


def hidden_csvs(rng: random.Random, params: dict[str, Any], spec: dict[str, Any]) -> dict[str, bytes | None]:
    """The extracts the tests run the replacement on, one corner each (None: a path that does not exist)."""
    line_max, keep, table = params["line_max"], params["name_len"] - 1, params["max_groups"]
    group, value, ok, groups, (mu, sd) = spec["group"], spec["value"], spec["ok"], spec["groups"], spec["mu_sd"]
    header = f"id,{group},{value},status"
    serial = [0]

    def rid() -> str:
        serial[0] += 1
        return f"{spec['prefix']}{serial[0]:05d}"

    def amount() -> str:
        return f"{rng.gauss(mu, sd):.2f}"

    def row(name: str | None = None, raw: str | None = None, status: str | None = None) -> str:
        name = rng.choice(groups) if name is None else name
        return f"{rid()},{name},{amount() if raw is None else raw},{ok if status is None else status}"

    def csv(rows: list[str], head: str = header, end: str = "\n") -> bytes:
        return (end.join([head, *rows]) + end).encode()

    # the line buffer: lines on both sides of its size (padded in a trailing column or in the id), and one whose
    # cut falls where a whole row starts
    def padded(total: int) -> str:
        base = row() + ","
        return base + "x" * max(0, total - len(base))

    head = row(groups[1], "5") + ","
    smuggled = head + "y" * (line_max - 1 - len(head)) + row(groups[0], "77")
    long_lines = [padded(n) for n in (line_max - 3, line_max - 2, line_max - 1, line_max, line_max + 7)]
    long_id = row(groups[2], "12.5")
    long_lines += ["z" * (2 * line_max + 11 - len(long_id)) + long_id, smuggled, row()]
    # the header itself longer than the buffer: its tail is read as a row
    long_header = f"{header},{'_'.join(['comment'] * (line_max // 6))}"
    # the name buffer: names at, over and far over its size (two become one), case, spaces, quotes, a UTF-8 cut
    stem = (groups[0] + "-" + "".join(groups[1:]))[: keep + 6]
    names = [stem[:keep], stem[: keep + 1], stem, groups[0].upper(), f" {groups[0]}", f'"{groups[0]}"', ""]
    names.append("zürich" + "é" * keep)
    name_rows = [row(name) for name in names for _ in range(rng.randint(1, 3))]
    # numbers as strtod reads them
    spellings = [" 12.5", "1e3", "0x10", "12abc", "1.5e", "+.5", "-0", "0x1p3", "\t7.25", "0x", "1e-50", "3.",
                 "12,5", "NaN", "nan(7)", ".e1", "e5", "- 4", "+-1", "0x1.8P1", "  -7.125  ", "4.4.4"]  # fmt: skip
    number_rows = [row(rng.choice(groups[:2]), raw) for raw in spellings]
    # infinities and floats out of range: inf in one group, inf and -inf in another (a NaN mean), 1e39 (no float)
    infinite = [row(groups[0], raw) for raw in ("inf", "12", "INFINITY")]
    infinite += [row(groups[1], raw) for raw in ("inf", "-inf", "3")]
    infinite += [row(groups[2], raw) for raw in ("1e39", "-5")] + [row(groups[-1], "-1e39"), row(groups[-1], "1e38")]
    # 32-bit float: cents lost on large values, and a long column whose float sum drifts
    precision = [row(groups[0], raw) for raw in ("20000000.01", "16777217", "123456789.99", "0.1", "33554431")]
    precision += [row(groups[1], "1234.56") for _ in range(3000)]
    precision += [row(groups[2], f"{rng.uniform(90000, 99999):.2f}") for _ in range(400)]
    # statuses compared byte for byte
    spelled = [ok.upper(), f"{ok} ", f" {ok}", ok.title(), ok[:-1], f"{ok}s", f'"{ok}"']
    status_rows = [row(status=s) for s in spelled] + [row() for _ in range(6)]
    rng.shuffle(status_rows)
    # other columns and orders, quoted notes with commas (every comma splits), short rows
    fields = ["status", "note", value, "id", group, "source"]
    notes = ["", "late", '"checked, twice"', '"said ""fine"""', '"a,b,c"']
    column_rows = []
    for _ in range(24):
        cells = {"status": ok if rng.random() > 0.2 else "error", "note": rng.choice(notes), value: amount(),
                 "id": rid(), group: rng.choice(groups), "source": rng.choice(["web", "till"])}  # fmt: skip
        column_rows.append(",".join(cells[f] for f in fields))
    column_rows += [f"{ok},late", ok, f"{ok},,1.5"]
    # more columns than the tool splits: the needed ones inside the first 16, and one beyond them
    wide_fields = [f"c{i:02d}" for i in range(20)]
    wide_fields[1], wide_fields[3], wide_fields[MAX_FIELDS - 1] = group, value, "status"
    wide_rows = []
    for _ in range(10):
        cells = [str(rng.randint(0, 9)) for _ in wide_fields]
        cells[1], cells[3], cells[MAX_FIELDS - 1] = rng.choice(groups), amount(), ok
        wide_rows.append(",".join(cells))
    far = [*wide_fields]
    far[1], far[MAX_FIELDS + 1] = far[MAX_FIELDS + 1], group
    # bytes: NUL after and before the value, a row starting with NUL, \r\r\n, white space, a tab, a lone \r
    raw = [
        row(groups[0], "41").encode() + b"\0tail",
        f"{rid()},{groups[0]},".encode() + b"\0" + f"42,{ok}".encode(),
        b"\0" + row().encode(),
        row(groups[1], "9").encode() + b"\r\r",
        row(groups[1], "8").encode() + b"\r",
        b"     ",
        b"\t",
        b"\r",
        f"{rid()},caf".encode() + b"\xc3\xa9\xff\xfe" + f",3.5,{ok}".encode(),
        b",,,",
    ]
    # the group table: more groups than it holds, with their rows interleaved
    many = [f"g{i:02d}" for i in range(table + 6)]
    rng.shuffle(many)
    many_rows = [row(name, str(10 + i)) for i, name in enumerate(many) for _ in range(1 + i % 3)]
    rng.shuffle(many_rows)
    # a byte-order mark before the group column's name
    group_first = [f"{rng.choice(groups)},{amount()},{ok},{rid()}" for _ in range(4)]
    return {
        "long_lines.csv": csv(long_lines),
        "long_header.csv": csv([row() for _ in range(6)], long_header),
        "names.csv": csv(name_rows),
        "numbers.csv": csv(number_rows),
        "infinities.csv": csv(infinite),
        "precision.csv": csv(precision),
        "statuses.csv": csv(status_rows),
        "columns.csv": csv(column_rows, ",".join(fields)),
        "wide.csv": csv(wide_rows, ",".join(wide_fields)),
        "far_column.csv": csv(wide_rows[:3], ",".join(far)),
        "header_case.csv": csv([row() for _ in range(4)], f"id,{group.title()},{value},status"),
        "bom.csv": b"\xef\xbb\xbf" + csv(group_first, f"{group},{value},status,id"),
        "bytes.csv": b"\n".join([header.encode(), *raw]) + b"\n",
        "many_groups.csv": csv(many_rows),
        "crlf.csv": csv([row() for _ in range(12)], end="\r\n"),
        "header_only.csv": csv([]),
        "blank_lines.csv": header.encode() + b"\n\n\r\n\n",
        "empty.csv": b"",
        "no_newline_at_end.csv": csv([row() for _ in range(3)])[:-1],
        "missing.csv": None,
    }


def instruction(spec: dict[str, Any], data_path: str) -> str:
    group, value = spec["group"], spec["value"]
    return textwrap.dedent(f"""\
        # Retire the legacy `grpstat`

        The {spec["domain"]} team summarises its CSV extracts (like `{data_path}`: `id,{group},{value},status`)
        with the legacy `grpstat` tool, a C program from 2001 whose source is lost: `{TOOL} FILE` prints a
        per-{group} report of the extract `FILE` to standard output. The tool is being removed from every machine,
        and nobody has ever written down what it does.

        Write `{PROGRAM}`, a replacement such that `python3 {PROGRAM} FILE` prints exactly what
        `grpstat FILE` prints, byte for byte, and exits with the same status, for **any** file `FILE` the
        exporters may write, including the odd ones: very long lines, NUL and other stray bytes, quoted fields
        with commas, columns in another order, in another case or among many others, {group} names of any length
        and in any bytes, more {group}s than the tool can keep track of, statuses spelled otherwise, numbers with
        spaces, signs, exponents, hexadecimal digits, infinities or trailing letters, numbers too large or too
        many for the tool's arithmetic, a file that is empty, holds only its header or does not exist. What it
        writes to standard error does not matter.

        - `grpstat` is installed here, so you can run it on any file you like.
        - The tests run your program on other extracts, on a machine where `grpstat` and its licence
          (`{LICENCE}`) are gone: your program must not run `grpstat` or a copy of it (no executable
          binary may be left under `/app`).
        - Use the Python 3 standard library only.
        """)


TESTS = '''\
"""The replacement, run as nobody on extracts the solver never saw, against the legacy tool's own output."""

import base64
import json
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's program runs as nobody

EXPECTED = json.loads(__EXPECTED__)
HERE = Path(__file__).parent


def run_program(data):
    """stdout (bytes) and exit status of the replacement on ``data`` (None: a path that does not exist)."""
    work = agent_folder({"in.csv": data} if data is not None else {}, writable=True)
    path = work / ("in.csv" if data is not None else "missing.csv")
    out = work / "stdout.bin"
    done = run_agent(["sh", "-c", 'exec python3 /app/grpstat.py "$0" > "$1"', str(path), str(out)], cwd="/app",
                     timeout=60)
    return (out.read_bytes() if out.exists() else b""), done.returncode


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_report_as_the_legacy_tool(name):
    want = EXPECTED[name]
    data = None if want["file"] is None else (HERE / name).read_bytes()
    stdout, status = run_program(data)
    assert status == want["status"], f"{name}: exit status {status}, grpstat exits {want['status']}"
    expected = base64.b64decode(want["stdout"])
    assert stdout == expected, (
        f"{name}: the report differs from grpstat's:\\n{stdout[:1500]!r}\\ngrpstat printed:\\n{expected[:1500]!r}"
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


def draw_sample(rng: random.Random, params: dict[str, Any], spec: dict[str, Any]) -> str:
    """A sample whose report a double-precision replacement prints right too (a few draws in a hundred sum a group
    a cent off in float; those are drawn again), so one run of the tool on it shows no float corner."""
    exact, double = reference(params), reference(params, float32=False)
    for _ in range(20):
        sample = sample_csv(rng, spec)
        if exact(sample.encode()) == double(sample.encode()):
            return sample
    raise RuntimeError("no sample without a float corner in 20 draws")  # pragma: no cover - about 1e-40


def generate(case: SeedCase, rng: random.Random, family: Any) -> TaskDraft:
    """A level-6 task (``family``: the generator module, for its domains): the tool built with drawn numbers, a
    sample extract, hidden extracts and the tool's own reports."""
    domain, group, value, groups, mu_sd = rng.choice(family.DOMAINS)
    groups = sorted(rng.sample(groups, rng.randint(3, len(groups))))
    ok = rng.choice(["ok", "valid", "done"])
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    params.update(group=group, value=value, ok=ok)
    spec = {"domain": domain, "group": group, "value": value, "ok": ok, "groups": groups, "mu_sd": mu_sd,
            "prefix": domain[:2].upper()}  # fmt: skip
    data_path = f"/app/data/{domain}.csv"
    sample = draw_sample(rng, params, spec)
    hidden = hidden_csvs(rng, params, spec)
    hidden["app.csv"] = sample.encode()
    expected = {}
    for name, data in hidden.items():
        stdout, status = run_tool(params, data)
        shown = base64.b64encode(stdout).decode()
        expected[name] = {"file": None if data is None else name, "stdout": shown, "status": status}
    support = sorted(name for name, data in hidden.items() if data is not None)
    solution = solve_sh(
        f"cat > {PROGRAM} <<'GRPSTAT'\n"
        + program(params)
        + "GRPSTAT\n"
        + f"python3 {PROGRAM} {data_path} | cmp - <(grpstat {data_path}) && echo same report\n"
    )
    secret = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    docker = dockerfile() + f"COPY legacy/grpstat {TOOL}\nCOPY legacy/licence {LICENCE}\n"
    files: dict[str, str | bytes] = {
        "instruction.md": instruction(spec, data_path),
        "task.toml": task_toml(
            family=family.NAME,
            seed_case=case.id,
            category=family.CATEGORY,
            tags=[*family.TAGS, "legacy"],
            difficulty="hard",
            agent_timeout=900.0,
            verifier_timeout=300.0,
        ),  # fmt: skip
        "environment/Dockerfile": docker,
        f"environment/app/data/{domain}.csv": sample,
        "environment/legacy/grpstat": binary(params),
        "environment/legacy/licence": f"grpstat 1.4 site licence {secret}\n",
        "solution/solve.sh": solution,
        "tests/test.sh": test_sh(support),
        "tests/test_outputs.py": tests_text(expected),
        "tests/agentcall.py": AGENTCALL,
        **{f"tests/{name}": hidden[name] for name in support},
    }
    return TaskDraft(
        name=task_name(family.NAME, rng, "legacy-grpstat"),
        family=family.NAME,
        files=files,
        executable={"environment/legacy/grpstat"},
        params={
            "legacy": params,
            "domain": domain,
            "group": group,
            "value": value,
            "stat": "mean",
            "level": 6,
            "output_path": None,
            "stale_output": None,
            "leak_hint": None,
        },
    )

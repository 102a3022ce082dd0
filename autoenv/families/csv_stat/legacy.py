"""csv-stat level 6: retire a legacy C tool whose behaviour is the specification.

Levels 2-5 tell their rules (in the instruction, or in a data dictionary a careful solver reads first). Here nothing
is told: the task ships ``/usr/local/bin/grpstat``, a stripped static binary built from ``files/grpstat.c`` with
three numbers drawn per task (its line buffer, its group-name buffer, its group table) and the domain's column
names and final status, and asks for ``/app/grpstat.py`` printing the same bytes for any extract. What a 2001 C
program does with long lines, NUL bytes, commas inside quotes, header names in other cases, long or non-ASCII names,
numbers as strtod reads them, 32-bit float sums and a full table is found only by running it on such input; the
tests run the replacement on hidden extracts made of exactly those corners, with the tool and its licence removed
first (a copy of the binary in /app cannot run, and is refused).

What every legacy-tool level shares (the build, the expected outputs, the task's files and tests, the solver's
turns) is :mod:`autoenv.families.legacy_tool`'s; this module draws the numbers, the inputs and the instruction.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft
from autoenv.families.legacy_tool import LegacyTool

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

#: The drawn parameters and the C names the tool is compiled with them as.
MACROS = {
    "line_max": "LINE_MAX_",
    "name_len": "NAME_LEN",
    "max_groups": "MAX_GROUPS",
    "group": "GROUP_COL",
    "value": "VALUE_COL",
    "ok": "OK_STATUS",
}
GRPSTAT = LegacyTool("grpstat", "1.4", __file__, MACROS, "csv-stat level 6", "extracts", "FILE")
#: The three compile-time numbers, drawn per task: what the solver has to find by running the tool. Every name of
#: the family's domains (8 bytes at most) fits the shortest name buffer, and a sample's groups the smallest table.
CHOICES = {"line_max": (64, 80, 96, 128), "name_len": (10, 12, 14, 16), "max_groups": (8, 10, 12, 16)}
#: The status a row must have to count, drawn per task too.
OK = ("ok", "valid", "done")
#: Every build the archive level's archive must tell apart (the generator's check, the scripted solver's search).
SPACE = {**CHOICES, "ok": OK}
#: The tool's fixed field limit (files/grpstat.c's MAX_FIELDS), not drawn.
MAX_FIELDS = 16
OTHER_STATUSES = ["error", "retry", "void"]
BAD_VALUES = ["", "NA", "n/a", "-", "null", "?"]


def reference(params: dict[str, Any], *, float32: bool = True) -> Callable[[bytes], tuple[bytes, int]]:
    """The reference program's ``report`` (stdout, status) for a tool built with ``params``; ``float32=False``: the
    same program summing in double precision (what a replacement that never saw the float corners computes)."""
    scope: dict[str, Any] = {}
    source = GRPSTAT.program(params).replace('if __name__ == "__main__":', "if False:")
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


def instruction(spec: dict[str, Any], data_path: str, *, archived: bool = False) -> str:
    group, value = spec["group"], spec["value"]
    summarises, removed = (
        ("summarised", "The tool was removed from every machine before anyone\n        wrote down what it does.")
        if archived
        else (
            "summarises",
            "The tool is being removed from every machine,\n        and nobody has ever written down what it does.",
        )
    )  # fmt: skip
    return textwrap.dedent(f"""\
        # Retire the legacy `grpstat`

        The {spec["domain"]} team {summarises} its CSV extracts (like `{data_path}`: `id,{group},{value},status`)
        with {GRPSTAT.marker} tool, a C program from 2001 whose source is lost: `{GRPSTAT.tool} FILE` prints a
        per-{group} report of the extract `FILE` to standard output. {removed}

        Write `{GRPSTAT.replacement}`, a replacement such that `python3 {GRPSTAT.replacement} FILE` prints exactly what
        `grpstat FILE` prints, byte for byte, and exits with the same status, for **any** file `FILE` the
        exporters may write, including the odd ones: very long lines, NUL and other stray bytes, quoted fields
        with commas, columns in another order, in another case or among many others, {group} names of any length
        and in any bytes, more {group}s than the tool can keep track of, statuses spelled otherwise, numbers with
        spaces, signs, exponents, hexadecimal digits, infinities or trailing letters, numbers too large or too
        many for the tool's arithmetic, a file that is empty, holds only its header or does not exist. What it
        writes to standard error does not matter.

        """) + GRPSTAT.closing(
        "", "`grpstat` is installed here, so you can run it on any file you like.\n", archived=archived
    )


def draw_sample(rng: random.Random, params: dict[str, Any], spec: dict[str, Any]) -> str:
    """A sample whose report a double-precision replacement prints right too (a few draws in a hundred sum a group
    a cent off in float; those are drawn again), so one run of the tool on it shows no float corner."""
    exact, double = reference(params), reference(params, float32=False)
    for _ in range(20):
        sample = sample_csv(rng, spec)
        if exact(sample.encode()) == double(sample.encode()):
            return sample
    raise RuntimeError("no sample without a float corner in 20 draws")  # pragma: no cover - about 1e-40


def generate(case: SeedCase, rng: random.Random, family: Any, *, archived: bool = False) -> TaskDraft:
    """A level-6 task (``family``: the generator module, for its domains): the tool built with drawn numbers, a
    sample extract, hidden extracts and the tool's own reports; at level 7 (``archived``) the tool is gone and the
    archive of its runs on other extracts of the same kinds is left."""
    domain, group, value, groups, mu_sd = rng.choice(family.DOMAINS)
    groups = sorted(rng.sample(groups, rng.randint(3, len(groups))))
    ok = rng.choice(OK)
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    params.update(group=group, value=value, ok=ok)
    spec = {"domain": domain, "group": group, "value": value, "ok": ok, "groups": groups, "mu_sd": mu_sd,
            "prefix": domain[:2].upper()}  # fmt: skip
    data_path = f"/app/data/{domain}.csv"
    record = {"domain": domain, "group": group, "value": value, "stat": "mean", "level": 7 if archived else 6}
    sample, hidden = draw_sample(rng, params, spec), hidden_csvs(rng, params, spec)
    archive = None
    if archived:
        past = {**hidden_csvs(rng, params, spec), "extract.csv": sample.encode()}
        archive = GRPSTAT.archive_runs(params, past, rng, space=SPACE)
    return GRPSTAT.draft(
        case, rng, family=family.NAME, category=family.CATEGORY, tags=[*family.TAGS, "legacy"],
        hint="archived-grpstat" if archived else "legacy-grpstat", record=record,
        instruction=instruction(spec, data_path, archived=archived), params=params, sample_path=data_path,
        sample=sample, hidden=hidden, archive=archive,
    )  # fmt: skip

"""csv-stat level 5: a program for any extract of an export, by the rules of its data dictionary, within a time limit.

Levels 2-4 name every trap in the instruction and one look at the data shows it. Here the instruction says what to
compute; ``/app/data/DICTIONARY.md`` says how the export is written and which rows count, clause by clause, and the
shipped extract shows none of the corners the clauses are about. The tests run ``/app/groupstat.py`` on unseen
extracts that hold every one (:mod:`files/extract5.py`): a byte-order mark, CRLF, quoted notes with commas, quotes
and line breaks, header names in other cases and orders among other columns, re-sent records (the last row of an id
wins, even an invalid one), time stamps in other zones at the period's boundaries, group names that differ by case
folding, NFKC or white space, numbers with thousands separators, exponents, signs and spaces, missing-value
spellings in any case and non-finite values, statuses in other cases, blank rows, an extract with no row at all, and
a 60,000-row extract to summarise within 10 seconds (a program that looks ids up in a list, or re-reads the file
per row, is far too slow). The reference is ``files/groupstat5.py``; the tests hold it and the extract generator,
and compute the expected summaries at grading time.
"""

from __future__ import annotations

import functools
import json
import random
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.csv_stat import statistic
from autoenv.families.solver import fill_program

PROGRAM = "/app/groupstat.py"
LARGE_ROWS = 60_000  # a list lookup per id: ~1.8e9 comparisons, minutes; the reference: ~1 s
LIMIT_S = 10
FILES = Path(__file__).with_name("files")

#: Group names whose spellings need case folding, NFKC or white space rules (added to a domain's own names).
UNICODE_NAMES = [
    ("zürich", ["ZÜRICH", "Zu\u0308rich", "zürich\u00a0"]),
    ("straße", ["STRASSE", "Strasse", " straße "]),
    ("ålesund", ["ÅLESUND", "A\u030alesund", " Ålesund"]),
    ("new york", ["NEW  YORK", "New\tYork", "ｎｅｗ ｙｏｒｋ"]),
]
OTHER_STATUSES = ["error", "retry", "void", "pending"]


@functools.cache
def source(name: str) -> str:
    """The text of ``files/<name>`` (the reference program, the extract generator)."""
    return (FILES / name).read_text()


STAT_MARKER = "# STAT: def stat(xs), the statistics of files/solver_program.py (level5.reference_text puts it here)\n"


@functools.cache
def reference_text() -> str:
    """The reference program (``files/groupstat5.py``) with the family's one ``stat`` (:mod:`.statistic`) in place."""
    text = source("groupstat5.py")
    if STAT_MARKER not in text:
        raise RuntimeError("files/groupstat5.py lacks its STAT marker line")
    return text.replace(STAT_MARKER, statistic.stat_function('P["stat"]'))


def make_extract(seed: int, n: int, spec: dict[str, Any], corners: bool, **kw: bool) -> bytes:
    scope: dict[str, Any] = {}
    exec(source("extract5.py"), scope)  # noqa: S102 - the family's own generator text
    return scope["make"](seed, n, spec, corners, **kw)


def summary(params: dict[str, Any], data: bytes) -> list[str]:
    """The reference program's summary lines for the extract ``data``."""
    scope: dict[str, Any] = {"__name__": "reference"}
    exec(fill_program(reference_text(), params), scope)  # noqa: S102 - the family's own reference
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.csv"
        path.write_bytes(data)
        return scope["summary"](str(path))


def dictionary(domain: str, spec: dict[str, Any], group: str, value: str) -> str:
    ok, start, end = spec["ok"], spec["start"], spec["end"]
    return textwrap.dedent(f"""\
        # The {domain} export: data dictionary

        ## Files

        - An extract is a UTF-8 CSV file with one header line. The exporter may begin it with a byte-order mark
          and ends lines with either CRLF or LF.
        - A field is quoted when it holds a comma, a quote or a line break; a quoted field may span lines.
        - Columns are found by their header names, which are matched ignoring case and surrounding spaces. Their
          order varies between extracts, and other columns may appear.
        - A row without a single non-blank cell carries nothing and is skipped.

        ## Columns

        - `id`: the record's id. When a record is corrected, the exporter sends it again, later in the same
          extract, with the same id: the last row with an id replaces every earlier row with that id, even when
          the last one is not valid.
        - `ts`: when the record was taken, ISO 8601 with an offset (`+05:30`) or `Z`. An extract covers one period:
          from `{start}` (inclusive) to `{end}` (exclusive), in UTC; a row whose instant, converted to UTC, lies
          outside it belongs to another extract and is not valid.
        - `{group}`: the {group}'s name as typed. Its key is the name in Unicode NFKC form, case-folded
          (`str.casefold`), with each run of white space made one space and none at either end: `Straße` and
          ` STRASSE ` are one {group}, `strasse`.
        - `{value}`: a decimal number, possibly with surrounding spaces, a sign, thousands separators (`1,204.50`)
          or an exponent (`1.2e3`). Empty cells, `NA`, `N/A`, `null`, `none`, `-` and `?` (in any case) are
          missing; `nan` and `inf` are not finite. Negative values are entry errors.
        - `status`: the record's state; it is final when the status is `{ok}`, compared ignoring case and
          surrounding spaces.
        - `note`: free text.

        ## Valid rows

        A row counts when it is the last row of its id, its `ts` lies in the period, its status is final and its
        `{value}` is a finite number that is not negative.
        """)


def generate(case: Any, rng: random.Random, family: Any) -> TaskDraft:
    """A level-5 csv-stat task (``family``: the generator module, for its domains, statistics and names)."""
    domain, group, value, groups, (mu, sd) = rng.choice(family.DOMAINS)
    groups = rng.sample(groups, rng.randint(3, len(groups)))
    stat = rng.choice(sorted(family.STATS))
    ok = rng.choice(["ok", "valid", "done"])
    month = rng.randint(1, 11)
    start, end = f"2024-{month:02d}-01T00:00:00Z", f"2024-{month + 1:02d}-01T00:00:00Z"
    plain = [
        (g, [g.upper(), f" {g.title()} ", f"{g}\u00a0", "".join(chr(ord(c) + 0xFEE0) for c in g.upper())])
        for g in groups
        if g.isascii() and g.replace("-", "").isalpha()
    ]
    spec = {
        "group": group,
        "value": value,
        "ok": ok,
        "others": OTHER_STATUSES,
        "names": [*plain, *UNICODE_NAMES],
        "plain": len(plain),
        "mu": mu,
        "sd": sd,
        "start": start,
        "end": end,
        "prefix": domain[:2].upper(),
    }
    params = {
        "group": group,
        "value": value,
        "ok": ok,
        "stat": stat,
        "header": f"{group},n,{stat}",
        "start": start,
        "end": end,
    }
    data = make_extract(rng.randint(1, 10**6), rng.randint(300, 500), spec, False)
    data_path = f"/app/data/{domain}.csv"
    hidden = {
        "extract_a.csv": make_extract(rng.randint(1, 10**6), rng.randint(300, 500), spec, True, bom=True, crlf=True),
        "extract_b.csv": make_extract(rng.randint(1, 10**6), rng.randint(300, 500), spec, True),
        "extract_empty.csv": make_extract(rng.randint(1, 10**6), 0, spec, True, bom=True, crlf=True),
    }
    spec["large_seed"] = rng.randint(1, 10**6)
    instruction = textwrap.dedent(f"""\
        # Per-{group} {stat} of {value}, for any extract

        `{data_path}` is one extract of the {domain} export. Write `{PROGRAM}`: `python3 {PROGRAM} IN OUT`
        must read an extract `IN` and write its summary to `OUT`. Run it on the shipped extract to write
        `/app/answer.csv` as well. The tests run it on extracts you do not see, from the same export, among them a
        large one (about {LARGE_ROWS:,} rows) that it must summarise within {LIMIT_S} seconds.

        `/app/data/DICTIONARY.md` is the export's data dictionary: how extracts are written, and which rows are
        valid. The shipped extract does not show every case it describes; the program must handle them all.

        The summary:

        - first line: the header `{group},n,{stat}`;
        - then one line per {group} that has at least one valid row, named by its key (as the dictionary defines
          it), sorted by key as plain strings (by code point);
        - then one final line named `ALL`, computed the same way over all valid rows;
        - `n` is the number of valid rows and the {stat} is {family.STATS[stat]} of `{value}`, written with exactly
          3 digits after the decimal point;
        - when no row is valid at all, the summary is the header and the line `ALL,0,` (an empty statistic).

        Values are checked to within 0.001. Do not modify the shipped files.
        """)
    want = summary(params, data)
    tests = _tests(data_path, sha256_text(data.decode("utf-8")), want, spec, params, sorted(hidden))
    support = {
        **hidden,
        "extract5.py": source("extract5.py"),
        "reference_summary.py": fill_program(reference_text(), params),
    }
    solution = solve_sh(
        f"cat > {PROGRAM} <<'GROUPSTAT'\n"
        + fill_program(reference_text(), params)
        + "GROUPSTAT\n"
        + f"python3 {PROGRAM} {data_path} /app/answer.csv\ncat /app/answer.csv\n"
    )
    app = {f"data/{domain}.csv": data.decode("utf-8"), "data/DICTIONARY.md": dictionary(domain, spec, group, value)}
    files = task_files(
        case,
        family.NAME,
        family.CATEGORY,
        [*family.TAGS, stat],
        instruction,
        solution,
        tests,
        app=app,
        hidden=support,
        verifier_timeout=240.0,
        agent_timeout=600.0,
    )
    name = task_name("csv-stat", rng, f"{group}-{stat}")
    draft_params: dict[str, Any] = {
        "domain": domain,
        "group": group,
        "value": value,
        "stat": stat,
        "level": 5,
        "leak_hint": None,
        "stale_output": None,
        "output_path": "/app/answer.csv",
    }
    return TaskDraft(name=name, family="csv-stat", files=files, params=draft_params)


def _tests(data_path: str, sha: str, want: list[str], spec: dict, params: dict, hidden: list[str]) -> str:
    return textwrap.dedent(f'''\
        """The program on the shipped extract, on unseen ones and on a large one within the time limit. The expected
        summaries come from the reference program (reference_summary.py) on the same bytes."""

        import hashlib
        import json
        import time
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        import extract5
        import reference_summary

        DATA = Path({data_path!r})
        DATA_SHA256 = {sha!r}
        ANSWER = Path("/app/answer.csv")
        EXPECTED_ANSWER = {want!r}
        SPEC = json.loads({json.dumps(spec, ensure_ascii=True)!r})
        HIDDEN = {hidden!r}
        LARGE_ROWS = {LARGE_ROWS}
        LIMIT_S = {LIMIT_S}


        def lines_of(text):
            return [line.rstrip("\\r") for line in text.split("\\n") if line.strip()]


        def same_summary(got, want):
            assert got[:1] == want[:1], "header"
            assert [line.split(",")[0] for line in got[1:]] == [line.split(",")[0] for line in want[1:]], "names"
            for g, w in zip(got[1:], want[1:]):
                g_name, g_n, g_v = g.split(",")
                w_name, w_n, w_v = w.split(",")
                assert int(g_n) == int(w_n), (g, w)
                if w_v == "":
                    assert g_v == "", (g, w)
                else:
                    assert "." in g_v and len(g_v.split(".")[1]) == 3, g
                    assert float(g_v) == pytest.approx(float(w_v), abs=1e-3), (g, w)


        def reference(data, tmp_path):
            """The reference summary, from the grader's own copy of the bytes."""
            path = tmp_path / "reference.csv"
            path.write_bytes(data)
            return reference_summary.summary(str(path))


        def run_program(data, timeout=60):
            work = agent_folder({{"in.csv": data}}, writable=True)
            started = time.monotonic()
            out = run_agent(["python3", "/app/groupstat.py", str(work / "in.csv"), str(work / "out.csv")],
                            cwd="/app", text=True, timeout=timeout)
            seconds = time.monotonic() - started
            assert out.returncode == 0, out.stderr[-2000:]
            return lines_of(read_agent_file(work / "out.csv")), seconds


        def test_input_unchanged():
            assert hashlib.sha256(DATA.read_bytes()).hexdigest() == DATA_SHA256


        def test_answer_for_the_shipped_extract():
            assert ANSWER.exists(), "missing /app/answer.csv"
            same_summary(lines_of(ANSWER.read_text(encoding="utf-8")), EXPECTED_ANSWER)


        @pytest.mark.parametrize("name", HIDDEN)
        def test_program_on_unseen_extract(name, tmp_path):
            data = Path(__file__).with_name(name).read_bytes()
            got, _ = run_program(data)
            same_summary(got, reference(data, tmp_path))


        def test_program_on_a_large_extract_within_the_limit(tmp_path):
            data = extract5.make(SPEC["large_seed"], LARGE_ROWS, SPEC, True, bom=True, crlf=True)
            want = reference(data, tmp_path)
            got, seconds = run_program(data, timeout=LIMIT_S)
            assert seconds <= LIMIT_S, f"{{seconds:.1f}} s for {{LARGE_ROWS}} rows"
            same_summary(got, want)
        ''')

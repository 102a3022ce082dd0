"""bugfix level 5: every function of a small package is buggy, found by running it against its docstrings.

Levels 2-4 break helpers from a small fixed set whose bugs one ``cat`` shows. Here the package
(:mod:`autoenv.families.bugfix.ledger`: money, payee keys, CSV reading, time stamps, ranking and a report that
composes them) has a docstring per function that is its contract, its own unit tests that pass, a sample export
on which the report looks right, and a bug report with the production traceback of the one bug that crashes.
The other bugs are silent: they show only on inputs the shipped files never hold (accounting negatives, half-even
cents, missing-value spellings, negative cents under one unit, amounts beyond a float's precision, casefolding and
NFKC, runs of white space, a byte-order mark, line breaks inside quoted fields, blank rows, padded header names,
time-zone offsets across midnight, ties and a non-positive ``k``). The tests call every function on unseen inputs
holding those corners (expected values computed here by the correct package) and run the report on two unseen
exports, so a fix must follow every clause of every docstring.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
import tempfile
import textwrap
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.bugfix import ledger

PAYEES = [
    ("Straße Café", ["STRASSE CAFÉ", "strasse  café", "Straße\u00a0Café"]),
    ("Acme Supplies", ["ACME SUPPLIES", " acme\tsupplies ", "Ａｃｍｅ Supplies"]),
    ("Café Noir", ["CAFE\u0301 NOIR", "café noir", "Cafe\u0301  Noir"]),
    ("ﬁne foods", ["Fine Foods", "FINE  FOODS", "fine foods "]),
    ("Nordic Rail", ["NORDIC RAIL", "nordic rail", "Nordic  Rail"]),
    ("Office Depot", ["OFFICE DEPOT", "office depot", "Office\u00a0Depot"]),
    ("Bäckerei Groß", ["BÄCKEREI GROSS", "bäckerei groß", "Bäckerei  Gross"]),
    ("Taxi Nova", ["TAXI NOVA", "taxi nova", " Taxi Nova"]),
]
OFFSETS = ["Z", "+00:00", "-08:00", "-05:00", "+05:30", "+09:00", "-03:00", ""]
MISSING_SPELLINGS = ["", "   ", "-", " - ", "N/A", "n/a", "NA", "null", "NULL", "None", "none"]
GARBAGE = ["abc", "12 eur", "1.2.3", "--5", "12abc", "$-$4", "(-5.00)"]
MEMOS = ["", "", "taxi, airport", 'said "urgent"', "line one\r\nline two", "ok", "team lunch, 4 people", "refund"]


def correct_namespace() -> dict[str, Any]:
    """The correct package's functions, by name (the generator computes every expected value with them)."""
    scope: dict[str, Any] = {}
    for module in ledger.MODULES:
        exec(ledger.module_source(module, None, "pkg"), scope)  # noqa: S102 - the family's own reference code
    return scope


def _amount_text(rng: random.Random) -> str:
    units, cents = rng.randint(0, 25000), rng.randint(0, 99)
    body = f"{units:,}.{cents:02d}" if units >= 1000 and rng.random() < 0.6 else f"{units}.{cents:02d}"
    r = rng.random()
    if r < 0.12:
        body = f"{units}.{cents:02d}5"  # three decimals, a half cent: rounded half to even
    elif r < 0.18:
        body = f"{units}.{cents // 10}"  # one decimal
    elif r < 0.22:
        body = str(units)
    r = rng.random()
    if r < 0.15:
        return f"({body})"
    if r < 0.25:
        return f"-{body}"
    if r < 0.3:
        return f"+{body}"
    if r < 0.38:
        return rng.choice(["${}", "-${}", "(${})"]).format(body)
    if r < 0.45:
        return f"  {body}\t"
    return body


def _stamp(rng: random.Random) -> str:
    day = datetime(2024, 3, 1) + timedelta(days=rng.randint(0, 27))
    hour = rng.choice([0, 1, 2, 21, 22, 23, rng.randint(0, 23)])
    moment = day.replace(hour=hour, minute=rng.randint(0, 59), second=rng.randint(0, 59))
    sep = rng.choice(["T", "T", " "])
    text = moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S")
    if rng.random() < 0.2:
        text += f".{rng.randint(0, 999):03d}"
    text += rng.choice(OFFSETS)
    return rng.choice([text, text, f" {text} "])


def _payee(rng: random.Random, payees: list[tuple[str, list[str]]]) -> str:
    name, spellings = rng.choice(payees)
    return rng.choice([name, name, *spellings])


def _cases(rng: random.Random, f: dict[str, Any], payees: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """Each function's unseen inputs (argument lists) and the correct package's answers."""
    amounts = [_amount_text(rng) for _ in range(160)]
    amounts += ["(1,204.00)", "0.125", "0.135", "2.675", "1.005", "$1,250.00", "-$3.10", "($45.10)", "+7.10"]
    amounts += MISSING_SPELLINGS + GARBAGE
    cents = [rng.randint(-99, -1) for _ in range(12)] + [rng.randint(-(10**6), 10**6) for _ in range(40)]
    cents += [rng.choice([-1, 1]) * rng.randint(10**15, 10**21) for _ in range(12)] + [0, -1, -100, 99]
    names = [_payee(rng, payees) for _ in range(60)] + [s for name, spellings in PAYEES for s in [name, *spellings]]
    stamps = [_stamp(rng) for _ in range(80)] + ["2024-03-01T22:30:00-08:00", "2024-03-02T01:00:00+05:30"]
    tops = []
    for _ in range(40):
        keys = rng.sample([n for n, _ in PAYEES] + [f"vendor {i}" for i in range(10)], rng.randint(2, 12))
        totals = {key: rng.choice([500, 1250, 1250, 990, -300, 4000]) for key in keys}
        tops.append([totals, rng.choice([-1, 0, 1, 3, len(keys), len(keys) + 2])])
    tops.append([{"zeta tours": 500, "alpha air": 500, "mid cafe": 900, "beta bank": 500}, 3])
    argsets = {
        "parse_amount": [[a] for a in amounts],
        "format_cents": [[c] for c in cents],
        "normalize_key": [[n] for n in names],
        "utc_day": [[s] for s in stamps],
        "top": tops,
    }
    out = {}
    for name, calls in argsets.items():
        answers = []
        for args in calls:
            try:
                value = f[name](*args)
                answers.append(["ok", [list(p) for p in value] if name == "top" else value])
            except ValueError:
                answers.append(["error", "ValueError"])
        out[name] = {"args": calls, "want": answers}
    return out


def _export(rng: random.Random, payees: list[tuple[str, list[str]]], *, bom: bool, crlf: bool, padded: bool) -> bytes:
    """An unseen export: padded header names, quoted memos with commas and line breaks, blank rows."""
    end = "\r\n" if crlf else "\n"
    plain = ["when", "payee", "amount", "memo"]
    header = ["when", " payee ", "amount", " memo"] if padded else plain
    records = [header]
    for _ in range(rng.randint(50, 90)):
        amount = _amount_text(rng) if rng.random() > 0.1 else rng.choice(MISSING_SPELLINGS)
        records.append([_stamp(rng), _payee(rng, payees), amount, rng.choice(MEMOS)])
    records[1][3] = 'line one\r\nline two, and a "quote"'  # every export has a line break in a quoted field
    lines = []
    for record in records:
        out = io.StringIO()
        csv.writer(out, lineterminator=end).writerow(record)
        lines.append(out.getvalue())
    for blank in ("", ",,,", " , , , "):  # rows without a non-blank cell, between records
        lines.insert(rng.randint(2, len(lines)), blank + end)
    return ("\ufeff" if bom else "").encode() + "".join(lines).encode()


def _sample(rng: random.Random, payees: list[tuple[str, list[str]]]) -> str:
    """The shipped sample: plain ASCII names, two-decimal positive amounts, midday UTC stamps (no corner at all)."""
    lines = ["when,payee,amount,memo"]
    plain = [name for name, _ in payees if name.isascii()] or ["Taxi Nova"]
    for i in range(rng.randint(12, 20)):
        stamp = f"2024-02-{rng.randint(1, 28):02d}T{rng.randint(9, 17):02d}:{rng.randint(0, 59):02d}:00Z"
        amount = "" if i == 5 else f"{rng.randint(1, 400)}.{rng.choice([0, 25, 50, 75, 99, 10]):02d}"
        lines.append(f"{stamp},{rng.choice(plain)},{amount},{rng.choice(['ok', 'lunch', 'cab', ''])}")
    return "\n".join(lines) + "\n"


def report_output(f: dict[str, Any], data: bytes, argv: list[str]) -> str:
    """What the correct report prints for the export ``data`` and the arguments ``argv``."""
    scope = dict(f)
    body = "\n".join(line for line in ledger.REPORT.splitlines() if not line.startswith("from __PKG__"))
    exec(body.replace("__name__ ==", "'' =="), scope)  # noqa: S102 - the family's own reference code
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.csv"
        path.write_bytes(data)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            scope["main"]([str(path), *argv])
    return out.getvalue()


def _traceback(package: str, sources: dict[str, str], parse_bug: int) -> str:
    """The production traceback of the one bug that crashes on the March export (the others are silent)."""
    report, money = sources["report"], sources["money"]
    bad = shown = "(1204.00)" if parse_bug == 0 else "N/A"  # no comma: any of the readers gives the cell whole

    def line_of(text: str, needle: str) -> tuple[int, str]:
        for number, line in enumerate(text.splitlines(), 1):
            if needle in line:
                return number, line.strip()
        raise ValueError(needle)

    n_main, main_line = line_of(report, "main(sys.argv[1:])")
    n_call, call_line = line_of(report, "parse_amount(row[")
    n_float, float_line = line_of(money, "float(t" if parse_bug == 0 else "return int(float(t) * 100)")
    return textwrap.dedent(f"""\
        # The report job crashed on the March export

        Reported by finance operations. The nightly job, as cron runs it:

            cd /app && python3 -m {package}.report /srv/exports/2024-03.csv --top 5

        It printed nothing and ended with:

            Traceback (most recent call last):
              File "<frozen runpy>", line 198, in _run_module_as_main
              File "<frozen runpy>", line 88, in _run_code
              File "/app/{package}/report.py", line {n_main}, in <module>
                {main_line}
              File "/app/{package}/report.py", line {n_call}, in main
                {call_line}
              File "/app/{package}/money.py", line {n_float}, in parse_amount
                {float_line}
            ValueError: could not convert string to float: '{shown}'

        The cell was `{bad}`. The February report did run, but finance says its day sums and its top payees did not
        match the books either. The exports come from several offices and tools.
        """)


def generate(case: Any, rng: random.Random, family: Any) -> TaskDraft:
    """A level-5 bugfix task (``family``: the generator module, for its name, category and tags)."""
    package = rng.choice(ledger.PACKAGE_NAMES)
    bugs = {name: rng.randrange(2) for name in sorted(ledger.FUNCTIONS)}
    payees = [*PAYEES[:2], *rng.sample(PAYEES[2:], 4)]  # the first two need casefold (ß) and NFKC
    f = correct_namespace()
    buggy = {m.name: ledger.module_source(m, bugs, package) for m in ledger.MODULES}
    report = ledger.REPORT.replace(ledger.PKG, package)
    app = {f"{package}/{name}.py": text for name, text in buggy.items()}
    app[f"{package}/__init__.py"] = '"""Expense exports: parsing, keys, ranking and the summary report."""\n'
    app[f"{package}/report.py"] = report
    app[f"tests/test_{package}.py"] = ledger.UNIT_TESTS.replace(ledger.PKG, package)
    sample = _sample(rng, payees)
    app["data/sample.csv"] = sample
    app["BUG-REPORT.md"] = _traceback(package, {"report": report, **buggy}, bugs["parse_amount"])
    exports = {
        "export_a.csv": _export(rng, payees, bom=True, crlf=True, padded=True),
        "export_b.csv": _export(rng, payees, bom=False, crlf=rng.random() < 0.5, padded=rng.random() < 0.5),
    }
    runs = [["sample.csv", []], ["export_a.csv", ["--top", "4"]], ["export_b.csv", []]]
    shipped = {"sample.csv": sample.encode(), **exports}
    want_report = {name: report_output(f, shipped[name], argv) for name, argv in runs}
    want_rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in exports.items():
            (Path(tmp) / name).write_bytes(data)
            want_rows[name] = f["read_rows"](str(Path(tmp) / name))
    cases = _cases(rng, f, payees)
    instruction = textwrap.dedent(f"""\
        # The report prints wrong numbers

        `/app/{package}` is a small Python package: `python3 -m {package}.report FILE [--top K]`, run from `/app`,
        summarises an expense export. The job crashed in production (`/app/BUG-REPORT.md` has the traceback), and
        the numbers it printed before were wrong as well. Find every buggy helper and fix it, so that every
        function of the package does what its docstring says for every input, not only for the sample
        `/app/data/sample.csv`: the docstrings are the contract. The tests call the package's functions and run
        the report on exports you do not see.

        Keep the module names, the function names and their signatures unchanged, and do not edit the report
        module or the data. The package's unit tests (`/app/tests`) pass; they cover little.
        """)
    tests = _tests(package, cases, want_rows, want_report, runs)
    correct = {m.name: ledger.module_source(m, None, package) for m in ledger.MODULES}
    patch = "cd /app\n" + "".join(
        f"cat > {package}/{name}.py <<'MODULE'\n{text}MODULE\n" for name, text in correct.items()
    )
    patch += f"python3 -m {package}.report data/sample.csv\n"
    hidden = dict(shipped)
    name = task_name("bugfix", rng, package)
    files = task_files(
        case,
        family.NAME,
        family.CATEGORY,
        [*family.TAGS, "contract"],
        instruction,
        solve_sh(patch),
        tests,
        app=app,
        hidden=hidden,
    )
    params = {
        "package": package,
        "functions": sorted(ledger.FUNCTIONS),
        "bugs": {n: ledger.FUNCTIONS[n][1].bugs[i][1] for n, i in bugs.items()},
        "leak_hint": None,
        "stale_output": None,
    }
    return TaskDraft(name=name, family="bugfix", files=files, params=params)


def _tests(package: str, cases: dict, want_rows: dict, want_report: dict, runs: list) -> str:
    modules = {name: module for name, (module, _) in ledger.FUNCTIONS.items()}
    return textwrap.dedent(f'''\
        """Every function of the package against its docstring, on inputs the solver never saw, and the report
        on unseen exports. Expected values come from the correct package."""

        import json
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, agent_module, run_agent  # the agent's code runs as nobody

        PACKAGE = {package!r}
        MODULES = {modules!r}
        CASES = json.loads({json.dumps(cases, ensure_ascii=True)!r})  # dicts in their order: ties
        ROWS = json.loads({json.dumps(want_rows, sort_keys=True, ensure_ascii=True)!r})
        REPORT = json.loads({json.dumps(want_report, sort_keys=True, ensure_ascii=True)!r})
        RUNS = {runs!r}

        CALL = """
        out = []
        for args in calls:
            try:
                value = getattr(m, name)(*args)
                if name == "top":
                    value = [list(pair) for pair in value]
                out.append(["ok", value])
            except ValueError:
                out.append(["error", "ValueError"])
            except Exception as exc:
                out.append(["error", type(exc).__name__ + ": " + str(exc)[:200]])
        result = out
        """


        @pytest.mark.parametrize("name", sorted(CASES))
        def test_function_keeps_its_docstring_on_unseen_inputs(name):
            mod = agent_module(PACKAGE + "." + MODULES[name])
            got = mod.run(CALL, calls=CASES[name]["args"], name=name)
            wrong = [
                (args, g, w) for args, g, w in zip(CASES[name]["args"], got, CASES[name]["want"]) if g != w
            ]
            assert not wrong, f"{{name}}: {{len(wrong)}} of {{len(got)}} wrong, e.g. {{wrong[:3]}}"


        @pytest.mark.parametrize("export", sorted(ROWS))
        def test_read_rows_on_unseen_export(export):
            work = agent_folder({{"in.csv": Path(__file__).with_name(export).read_bytes()}})
            mod = agent_module(PACKAGE + ".csvio")
            got = mod.run("result = m.read_rows(path)", path=str(work / "in.csv"))
            assert got == ROWS[export]


        @pytest.mark.parametrize(("export", "argv"), RUNS)
        def test_report_on_export(export, argv):
            work = agent_folder({{"in.csv": Path(__file__).with_name(export).read_bytes()}})
            out = run_agent(["python3", "-m", PACKAGE + ".report", str(work / "in.csv"), *argv], cwd="/app",
                            text=True, timeout=60)
            assert out.returncode == 0, out.stderr[-2000:]
            assert out.stdout.splitlines() == REPORT[export].splitlines()
        ''')

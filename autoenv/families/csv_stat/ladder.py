"""csv-stat's level 4: a program (``/app/groupstat.py IN OUT``) the tests run on CSV files the solver never sees.

The unseen files hold what the shipped one lacks: the columns in another order with an extra free-text column
(quoted commas), CRLF line ends, unicode group names in mixed case, ``nan``/``inf`` and exponent notation, and a
group whose every row is invalid (it has no line in the answer).
"""

from __future__ import annotations

import csv
import io
import json
import random
import textwrap
from typing import Any

from autoenv.families.csv_stat import statistic

PROGRAM = "/app/groupstat.py"


def hidden_tables(
    rng: random.Random, group: str, value: str, ok: str, names: list[str], mu: float, sd: float
) -> dict[str, list[dict[str, str]]]:
    """Two unseen tables as rows (column name -> cell)."""
    tables = {}
    for t in range(2):
        pool = [*names[:2], "zürich", "ålesund"]
        dead = f"void{t}"  # every row of this group is invalid
        rows = []
        for i in range(rng.randint(40, 80)):
            g = rng.choice([*pool, dead])
            shown = rng.choice([g, g.upper(), f"  {g.title()} "])
            x = round(rng.gauss(mu, sd), 2)
            raw = rng.choice([f"{x:.2f}", f"{x:.2f}", f"{x:.3e}", f" {x} "])
            status = ok if rng.random() > 0.15 else "error"
            if g == dead:
                raw, status = rng.choice(["nan", "inf", "-inf", "", "n/a"]), ok
            elif rng.random() < 0.08:
                raw = rng.choice(["nan", "NaN", "inf", "?", "-"])
            note = rng.choice(["", "checked, twice", 'said "fine"', "late"])
            rows.append({"status": status, value: raw, "note": note, group: shown, "id": f"H{t}{i:04d}"})
        tables[f"hidden_{t}.csv"] = rows
    return tables


def to_csv(rows: list[dict[str, str]], fields: list[str], terminator: str) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator=terminator)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


INSTRUCTION = textwrap.dedent(f"""
    ## The program

    Also write `{PROGRAM}`: `python3 {PROGRAM} IN OUT` must write to `OUT` the answer, in the same
    format and by the same rules, for any CSV file `IN` of such records. The tests run it on files you
    do not see: their columns may come in another order, with other columns among them (find the
    columns by their header names), quoted fields may hold commas and quotes, lines may end with
    `\\r\\n`, group names may hold any UTF-8 letters (sort the normalised names as plain strings, by code
    point), numbers may be written in exponent notation (`1.5e2`) or with spaces around them, `nan` and
    `inf` are not finite, and a group without a single valid row has no line at all.
    """)


def program(params: dict[str, Any]) -> str:
    """The reference program (the solution writes it): the solver's number rule and statistics
    (:mod:`autoenv.families.csv_stat.statistic`), reading the file the command line names."""
    return (
        "import csv, json, math, statistics, sys\n\nP = json.loads("
        + repr(json.dumps(params))
        + ")\n\n"
        + statistic.number_function()
        + "\n"
        + statistic.stat_function('P["stat"]')
        + "\n"
        + textwrap.dedent("""\
        groups = {}
        with open(sys.argv[1], newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                x = number(row[P["value"]])
                if row["status"] != P["ok"] or x is None or (P["drop_negative"] and x < 0):
                    continue
                groups.setdefault(row[P["group"]].strip().lower(), []).append(x)
        everything = [x for xs in groups.values() for x in xs]
        with open(sys.argv[2], "w", encoding="utf-8") as out:
            out.write(P["header"] + "\\n")
            for name in sorted(groups):
                out.write(f"{name},{len(groups[name])},{stat(groups[name]):.3f}\\n")
            out.write(f"ALL,{len(everything)},{stat(everything):.3f}\\n")
        """)
    )


def tests(expected: dict[str, Any]) -> str:
    """The tests of level 4, appended to level 3's: the program on every unseen file."""
    return textwrap.dedent(f'''\


        # -- the program, on files the solver never saw ------------------------------------------------
        import json

        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        HIDDEN = json.loads({json.dumps(expected, sort_keys=True)!r})


        @pytest.mark.parametrize("name", sorted(HIDDEN))
        def test_program_on_unseen_file(name):
            work = agent_folder({{"in.csv": (Path(__file__).with_name(name)).read_bytes()}}, writable=True)
            out = run_agent(["python3", "{PROGRAM}", str(work / "in.csv"), str(work / "out.csv")], cwd="/app",
                            text=True, timeout=60)
            assert out.returncode == 0, out.stderr[-2000:]
            lines = [line.strip() for line in read_agent_file(work / "out.csv").splitlines() if line.strip()]
            assert lines[0] == HEADER
            want = HIDDEN[name]
            assert [line.split(",")[0] for line in lines[1:]] == [g for g, _, _ in want]
            for line, (g, n, v) in zip(lines[1:], want):
                _, got_n, got_v = line.split(",")
                assert int(got_n) == n, line
                assert float(got_v) == pytest.approx(v, abs=1e-3), line
        ''')

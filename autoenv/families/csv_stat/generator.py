"""CSV statistic family: a grouped statistic over messy rows, checked to a tolerance.

Seed failures here are "computed over dirty rows", "wrong grouping because of
case/whitespace", "wrong definition of the statistic". The template varies the
domain, the columns, which rows are invalid, the statistic and its exact
definition, so the solver has to read the spec rather than pattern-match.
"""

from __future__ import annotations

import csv
import io
import random
import textwrap
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.csv_stat import ladder, legacy, level5, statistic
from autoenv.families.levels import load_ladder

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "csv-stat"
DESCRIPTION = "grouped statistic over messy CSV rows, to a tolerance"
KEYWORDS = ("csv", "statistic", "mean", "weighted", "aggregate", "tolerance", "data cleaning", "spreadsheet")
CATEGORY = "data-analysis"
TAGS = ["python", "csv", "statistics"]

DOMAINS = [
    ("sales", "store", "amount", ["harbor", "mill", "quay", "ridge", "elm", "dock"], (40.0, 18.0)),
    ("latency", "region", "latency_ms", ["eu-west", "us-east", "ap-south", "sa-east", "eu-north"], (120.0, 45.0)),
    ("readings", "site", "reading", ["north", "south", "east", "west", "harbor"], (21.0, 4.0)),
    ("scores", "team", "score", ["otters", "falcons", "lynx", "badgers", "herons"], (71.0, 12.0)),
]

STATS = {
    "mean": "the arithmetic mean",
    "median": "the median (for an even count, the mean of the two middle values)",
    "std": "the population standard deviation `sqrt(sum((x - mean)^2) / n)`",
    "p90": (
        "the 90th percentile by the nearest-rank method: the value at 1-based rank `ceil(0.9 * n)` of the sorted values"
    ),
    "range": "the range `max - min`",
    "sum": "the sum",
}

BAD_VALUES = ["", "NA", "n/a", "-", "null", "?"]


def compute(stat: str, xs: list[float]) -> float:
    """The statistic ``stat`` of ``xs``, by the code the reference solutions ship (:mod:`.statistic`)."""
    if stat not in STATS:
        raise ValueError(stat)
    return statistic.compute(stat, xs)


#: Graded difficulty: 1 clean data (a naive program passes), 2 messy names, invalid values and statuses
#: (the tasks of earlier releases), 3 as 2 with more invalid values and negatives always excluded, 4 as 3 with a
#: program the tests run on unseen files (:mod:`autoenv.families.csv_stat.ladder`), 5 a program by a data dictionary's
#: rules, on unseen extracts that hold every case the dictionary describes and a large one, within a time limit
#: (:mod:`autoenv.families.csv_stat.level5`), 6 retire a legacy C tool whose behaviour, quirks included, is the
#: specification (:mod:`autoenv.families.csv_stat.legacy`), 7 the same with only the archive of its past runs left.
LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file
DIFFICULTY_LEVELS = tuple(level.number for level in LADDER)


def answer(
    rows: list[dict[str, str]], group: str, value: str, ok: str, drop_negative: bool, stat: str
) -> dict[str, tuple[int, float]]:
    """Each normalised group's (n, statistic) over its valid rows, sorted by name, then ``ALL``."""
    buckets: dict[str, list[float]] = {}
    for row in rows:
        if row["status"] != ok:
            continue
        x = statistic.number(row[value])
        if x is None or (drop_negative and x < 0):
            continue
        buckets.setdefault(row[group].strip().lower(), []).append(x)
    everything = [x for xs in buckets.values() for x in xs]
    expected = {g: (len(xs), round(compute(stat, xs), 6)) for g, xs in sorted(buckets.items())}
    expected["ALL"] = (len(everything), round(compute(stat, everything), 6))
    return expected


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    if level not in DIFFICULTY_LEVELS:
        raise ValueError(f"csv-stat has difficulty levels {DIFFICULTY_LEVELS}, not {level!r}")
    if level >= 5:
        import sys

        if level >= 6:  # the legacy tool (7: only the archive of its runs is left): a task of its own shape
            return legacy.generate(case, rng, sys.modules[__name__], archived=level >= 7)
        return level5.generate(case, rng, sys.modules[__name__])
    domain, group, value, groups, (mu, sd) = rng.choice(DOMAINS)
    groups = rng.sample(groups, rng.randint(3, len(groups)))
    stat = rng.choice(sorted(STATS))
    ok = rng.choice(["ok", "valid", "done"])
    other_status = ["error", "retry", "calibrating", "void"]
    drop_negative = rng.random() < 0.5 or level >= 3
    bad_share = {1: 0.0, 2: 0.06, 3: 0.12, 4: 0.12}[level]
    n_rows = rng.randint(180, 420)
    rows = []
    for i in range(n_rows):
        g = rng.choice(groups)
        shown = rng.choice([g, g, g, g.upper(), f" {g.title()} ", f"{g} "])
        x = round(rng.gauss(mu + groups.index(g) * sd * 0.3, sd), 2)
        raw = f"{abs(x) if level == 1 else x:.2f}"
        r = rng.random()
        if r < bad_share:
            raw = rng.choice(BAD_VALUES)
        elif r < bad_share + 0.03 and drop_negative and level > 1:
            raw = f"{-abs(x):.2f}"
        status = ok if rng.random() > 0.1 else rng.choice(other_status)
        if level == 1:  # clean data: the same rules hold, nothing breaks them
            shown, status = g, ok
        rows.append({"id": f"{domain[:2].upper()}{i + 1:05d}", group: shown, value: raw, "status": status})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", group, value, "status"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    data = out.getvalue()

    expected = answer(rows, group, value, ok, drop_negative, stat)
    order = list(expected)
    data_path = f"/app/data/{domain}.csv"

    rules = [
        f"`status` is exactly `{ok}`;",
        f"`{value}` is a finite decimal number (empty cells, `NA`, `n/a`, `-`, `null`, `?` and other non-numbers are "
        f"invalid);",
    ]
    if drop_negative:
        rules.append(f"`{value}` is not negative (negative values are sensor/entry errors).")
    # level 1's names are consistent: the rule is defined there, not claimed to be needed
    names_are = (
        f"Names that differ only in case and spaces are one {group}"
        if level == 1
        else f"The `{group}` names are inconsistent"
    )
    instruction = (
        textwrap.dedent(f"""\
        # Per-{group} {stat} of {value}

        `{data_path}` holds {domain} records with the columns
        `id,{group},{value},status`. {"This extract has been cleaned already." if level == 1 else "The data is messy."}

        A row is **valid** when all of the following hold:

        """)
        + "\n".join(f"- {r}" for r in rules)
        + textwrap.dedent(f"""

        {names_are}: normalise `{group}` by stripping
        surrounding whitespace and lower-casing (`" {groups[0].title()} "`, `{groups[0].upper()}` and
        `{groups[0]}` are the same {group}).

        For every {group}, using only its valid rows, compute `n` (the number of
        valid rows) and the **{stat}** of `{value}`, that is {STATS[stat]}.

        Write the result to `/app/answer.csv`:

        - first line: the header `{group},n,{stat}`;
        - then one line per {group}, sorted alphabetically by the normalised name;
        - then one final line named `ALL`, computed the same way over all valid rows;
        - the {stat} written with exactly 3 digits after the decimal point.

        Values are checked to within 0.001. Do not modify the input file.
        """)
    )
    tests = textwrap.dedent(f'''\
        import hashlib
        from pathlib import Path

        import pytest

        ANSWER = Path("/app/answer.csv")
        DATA = Path("{data_path}")
        DATA_SHA256 = "{sha256_text(data)}"
        HEADER = "{group},n,{stat}"
        ORDER = {order!r}
        # {group}: (n, {stat}), computed from the shipped data
        EXPECTED = {expected!r}


        def read_answer():
            assert ANSWER.exists(), "missing /app/answer.csv"
            lines = [line.strip() for line in ANSWER.read_text().splitlines() if line.strip()]
            assert lines, "answer.csv is empty"
            return lines


        def test_input_unchanged():
            assert hashlib.sha256(DATA.read_bytes()).hexdigest() == DATA_SHA256


        def test_header_and_order():
            lines = read_answer()
            assert lines[0] == HEADER
            assert [line.split(",")[0] for line in lines[1:]] == ORDER


        def test_three_decimals():
            for line in read_answer()[1:]:
                value = line.split(",")[2]
                assert "." in value and len(value.split(".")[1]) == 3, line


        @pytest.mark.parametrize("name", ORDER)
        def test_values(name):
            rows = {{line.split(",")[0]: line.split(",") for line in read_answer()[1:]}}
            assert name in rows, f"no row for {{name}}"
            _, n, v = rows[name]
            exp_n, exp_v = EXPECTED[name]
            assert int(n) == exp_n
            assert float(v) == pytest.approx(exp_v, abs=1e-3)
        ''')
    solution = solve_sh(
        "python3 - <<'PY'\nimport csv, math, statistics\n\n"
        + statistic.number_function()
        + "\n"
        + statistic.stat_function(f'"{stat}"')
        + "\n"
        + textwrap.dedent(f'''\
        groups = {{}}
        with open("{data_path}", newline="") as fh:
            for row in csv.DictReader(fh):
                x = number(row["{value}"])
                if row["status"] != "{ok}" or x is None or ({drop_negative} and x < 0):
                    continue
                groups.setdefault(row["{group}"].strip().lower(), []).append(x)
        everything = [x for xs in groups.values() for x in xs]
        with open("/app/answer.csv", "w") as out:
            out.write("{group},n,{stat}\\n")
            for name in sorted(groups):
                out.write(f"{{name}},{{len(groups[name])}},{{stat(groups[name]):.3f}}\\n")
            out.write(f"ALL,{{len(everything)}},{{stat(everything):.3f}}\\n")
        PY
        cat /app/answer.csv
        ''')
    )
    name = task_name("csv-stat", rng, f"{group}-{stat}")
    app = {f"data/{domain}.csv": data}
    hidden: dict[str, Any] = {}
    if level >= 4:  # the program, run by the tests on files the solver never sees
        instruction += ladder.INSTRUCTION
        tables = ladder.hidden_tables(rng, group, value, ok, groups, mu, sd)
        fields = ["status", value, "note", group, "id"]
        hidden = {n: ladder.to_csv(rows, fields, "\r\n").encode() for n, rows in tables.items()}
        want = {
            n: [[g, *v] for g, v in answer(rows, group, value, ok, drop_negative, stat).items()]
            for n, rows in tables.items()
        }
        tests += ladder.tests(want)
        params_p = {
            "group": group,
            "value": value,
            "ok": ok,
            "drop_negative": drop_negative,
            "stat": stat,
            "header": f"{group},n,{stat}",
        }
        solution = solve_sh(
            f"cat > {ladder.PROGRAM} <<'GROUPSTAT'\n" + ladder.program(params_p) + "GROUPSTAT\n"
            f"python3 {ladder.PROGRAM} {data_path} /app/answer.csv\ncat /app/answer.csv\n"
        )
    files = task_files(case, NAME, CATEGORY, [*TAGS, stat], instruction, solution, tests, app=app, hidden=hidden)
    # a reference answer left behind by a hurried author (first-draft flaw)
    stale = "\n".join([f"{group},n,{stat}"] + [f"{g},{expected[g][0]},{expected[g][1]:.3f}" for g in order]) + "\n"
    pick = next((g for g in order if not float(expected[g][1]).is_integer()), order[0])
    params: dict[str, Any] = {
        "domain": domain,
        "group": group,
        "value": value,
        "stat": stat,
        "rows": n_rows,
        "level": level,
        "drop_negative": drop_negative,
        "leak_hint": f"{expected[pick][1]!r} for {pick}",
        "stale_output": ("answer.csv", stale),
        "output_path": "/app/answer.csv",
    }
    return TaskDraft(name=name, family="csv-stat", files=files, params=params)

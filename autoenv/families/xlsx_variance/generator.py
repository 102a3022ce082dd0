"""Family ``xlsx-variance``: fill a variance column, an OK/CHECK status and totals with formulas.

Randomised per task: cost or revenue sheet (and so the sign of the
variance), the order of the Budget/Actual columns, whether a title block sits
above the header, the tolerance, the number of rows and all the numbers. The
verifier (``verifiers/xlsx_tests.py``) evaluates the formulas with
``formula_eval.py`` on the sheet's numbers and on perturbed numbers.

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) leave layout and rules to the sheet and its Notes sheet, evaluate the
formulas on corner figures and take the actuals from a Ledger sheet; level 1 is the task above, unchanged.
"""

from __future__ import annotations

import random
from pathlib import Path

from autoenv.families.levels import load_ladder
from autoenv.families.office import common
from autoenv.families.xlsx_variance import ladder

NAME = "xlsx-variance"
DESCRIPTION = "fill variance, status and total formulas in a budget workbook"
KEYWORDS = ("xlsx", "excel", "spreadsheet", "formula", "variance", "openpyxl", "budget", "workbook")
FILES = Path(__file__).with_name("files")

THEMES = {
    "costs": {
        "sheets": ["Opex Q3", "Opex Q4", "Costs H1", "Overheads Q2"],
        "centre": "Cost centre",
        "owner": "Owner",
        "what": "cost centres",
        "names": [
            "Facilities",
            "IT operations",
            "Marketing",
            "Legal",
            "Travel",
            "Training",
            "Recruiting",
            "Cloud hosting",
            "Office supplies",
            "Consulting",
            "Insurance",
            "Fleet",
            "Security",
            "Catering",
        ],
        "prefix": "CC",
        "sign": "budget-actual",
        "definition": "Budget minus Actual (a positive variance means under budget)",
    },
    "revenue": {
        "sheets": ["Revenue Q3", "Sales Q4", "Bookings H2", "Revenue Q1"],
        "centre": "Region",
        "owner": "Account manager",
        "what": "sales regions",
        "names": [
            "Nordics",
            "Benelux",
            "Iberia",
            "DACH",
            "UK & Ireland",
            "France",
            "Italy",
            "Poland",
            "Baltics",
            "Czechia",
            "Austria",
            "Greece",
            "Romania",
            "Hungary",
        ],
        "prefix": "RG",
        "sign": "actual-budget",
        "definition": "Actual minus Budget (a positive variance means ahead of plan)",
    },
}
OWNERS = [
    "A. Berg",
    "J. Silva",
    "M. Novak",
    "K. Osei",
    "L. Rossi",
    "T. Kim",
    "R. Haddad",
    "S. Dubois",
    "E. Walsh",
    "P. Mehta",
]
TOLERANCES = [0.05, 0.075, 0.1, 0.15]

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file


def _pair(rng: random.Random, tolerance: float) -> tuple[int, int]:
    """A (budget, actual) pair whose variance is clearly on one side of the tolerance."""
    while True:
        budget = rng.randrange(50, 2500) * 100
        actual = int(round(budget * (1 + rng.uniform(-0.3, 0.3)), -1))
        if abs(abs(budget - actual) - tolerance * budget) > max(50, 0.01 * budget):
            return budget, actual


def _rows(rng: random.Random, n: int, tolerance: float) -> list[tuple[int, int]]:
    while True:
        pairs = [_pair(rng, tolerance) for _ in range(n)]
        flagged = sum(abs(b - a) > tolerance * b for b, a in pairs)
        if 2 <= flagged <= n - 2:
            return pairs


def _flipped(rng: random.Random, pairs: list[tuple[int, int]], tolerance: float) -> list[tuple[int, int]]:
    """Other numbers for every row, each with the opposite status, and a different CHECK count.

    The verifier's second pass evaluates the formulas on these: a status or
    total typed in as a constant (even inside a formula) then fails.
    """
    flagged = [abs(b - a) > tolerance * b for b, a in pairs]
    if 2 * sum(flagged) == len(pairs):
        raise ValueError("need an unequal split")
    out = []
    for want_check in (not f for f in flagged):
        while True:
            b, a = _pair(rng, tolerance)
            if (abs(b - a) > tolerance * b) == want_check:
                out.append((b, a))
                break
    return out


def build_workbook(rng: random.Random, path: Path) -> dict:
    from openpyxl.styles import Font

    theme = THEMES[rng.choice(sorted(THEMES))]
    sheet = rng.choice(theme["sheets"])
    tolerance = rng.choice(TOLERANCES)
    n = rng.randrange(8, 15)
    header_row = rng.choice([1, 3])
    budget_first = rng.random() < 0.6
    cols = {
        "code": "A",
        "centre": "B",
        "owner": "C",
        "budget": "D" if budget_first else "E",
        "actual": "E" if budget_first else "D",
        "variance": "F",
        "status": "G",
    }
    labels = {
        "code": "Code",
        "centre": theme["centre"],
        "owner": theme["owner"],
        "budget": "Budget",
        "actual": "Actual",
        "variance": "Variance",
        "status": "Status",
    }
    names = rng.sample(theme["names"], n)
    codes = sorted(rng.sample(range(100, 999), n))
    while True:
        pairs = _rows(rng, n, tolerance)
        flagged = sum(abs(b - a) > tolerance * b for b, a in pairs)
        if 2 * flagged != n:
            break
    perturbed = _flipped(rng, pairs, tolerance)
    rows = [
        [f"{theme['prefix']}-{code}", name, rng.choice(OWNERS), b, a] for code, name, (b, a) in zip(codes, names, pairs)
    ]

    wb = common.new_workbook()
    ws = wb.active
    ws.title = sheet
    if header_row > 1:
        ws["A1"] = f"{sheet}: budget against actual (EUR)"
        ws["A1"].font = Font(bold=True, size=13)
        ws["A2"] = "Prepared by group finance. Figures in EUR."
    headers = {}
    for key, col in cols.items():
        cell = ws[f"{col}{header_row}"]
        cell.value = labels[key]
        cell.font = Font(bold=True)
        headers[col] = labels[key]
    first = header_row + 1
    for i, row in enumerate(rows):
        r = first + i
        for key, value in zip(("code", "centre", "owner", "budget", "actual"), row):
            ws[f"{cols[key]}{r}"] = value
        for key in ("budget", "actual", "variance"):
            ws[f"{cols[key]}{r}"].number_format = "#,##0"
    total = first + n
    ws[f"{cols['centre']}{total}"] = "Total"
    ws[f"{cols['centre']}{total}"].font = Font(bold=True)
    for key in ("budget", "actual", "variance"):
        ws[f"{cols[key]}{total}"].number_format = "#,##0"
    for col, width in zip("ABCDEFG", (10, 18, 18, 12, 12, 12, 10)):
        ws.column_dimensions[col].width = width
    common.save_workbook(wb, path)
    return {
        "workbook": path.name,
        "sheet": sheet,
        "header_row": header_row,
        "first_row": first,
        "total_row": total,
        "cols": cols,
        "headers": headers,
        "rows": rows,
        "perturbed": [list(p) for p in perturbed],
        "tolerance": tolerance,
        "sign": theme["sign"],
        "what": theme["what"],
        "definition": theme["definition"],
    }


INSTRUCTION = """\
# Variance formulas in a budget workbook

`/app/variance.xlsx` has a sheet **{sheet}** that lists {n} {what} with their
budget and actual figures (header in row {header_row}, data in rows
{first}-{last}, and a row labelled **Total** in row {total}). The columns
are: {listing}.

Complete the sheet in place (save it back to `/app/variance.xlsx`) with
**formulas**, not typed-in numbers, so that it stays correct when a budget or
an actual changes:

1. **Variance** (column {variance}), rows {first}-{last}: {definition}.
2. **Status** (column {status}), rows {first}-{last}: the text `CHECK` when the
   absolute variance is more than {tolerance_pct} of that row's budget, and the
   text `OK` otherwise.
3. **Total** row {total}: under Budget, Actual and Variance, the sum of the
   rows above; under Status, the number of rows flagged `CHECK`.

Leave everything else as it is: the headers, the names and numbers, the
Total label and the sheet name.

The checker recomputes your formulas itself and ignores values cached in the
file (openpyxl, which is installed, does not compute formulas). It
understands cell references (`D4`, `$D$4`), ranges (`D4:D9`), arithmetic,
comparisons, `&`, percentages and the functions SUM, MIN, MAX, AVERAGE, ABS,
ROUND, IF, AND, OR, NOT, COUNTIF and SUMIF.
"""


def _pct(x: float) -> str:
    return f"{x * 100:g}%"


def generate(task_dir: Path, rng: random.Random, seed_case=None, level: int = DEFAULT_LEVEL) -> None:
    """An xlsx-variance task of ``level`` (:data:`LADDER`); level 1 writes exactly the tasks of earlier releases."""
    task_dir = Path(task_dir)
    case = build_workbook(rng, task_dir / "environment" / "app" / "variance.xlsx")
    if level >= 2:
        _above_level_one(task_dir, rng, case, level, seed_case)
        return
    n = len(case["rows"])
    listing = ", ".join(f"{col} {text}" for col, text in sorted(case["headers"].items()))
    common.write(
        task_dir / "instruction.md",
        common.reflow(
            INSTRUCTION.format(
                sheet=case["sheet"],
                n=n,
                what=case["what"],
                header_row=case["header_row"],
                first=case["first_row"],
                last=case["first_row"] + n - 1,
                total=case["total_row"],
                listing=listing,
                variance=case["cols"]["variance"],
                status=case["cols"]["status"],
                definition=case["definition"],
                tolerance_pct=_pct(case["tolerance"]),
            )
        ),
    )
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.OPENPYXL_PIN))
    solve_case = {k: case[k] for k in ("workbook", "sheet", "first_row", "total_row", "cols", "tolerance", "sign")} | {
        "n_rows": n
    }
    common.write_python_solution(task_dir, FILES / "xlsx_solve.py", solve_case)
    common.write_tests(task_dir, FILES / "xlsx_tests.py", case, common.FORMULA_EVAL_PATH)


LADDER_INSTRUCTION = """\
# Variance formulas in a budget workbook

`/app/variance.xlsx` has a sheet **{sheet}** that lists {what} with their
budget and actual figures, a Variance and a Status column to complete, and a
row labelled **Total**.{ledger}

Complete the sheet in place (save it back to `/app/variance.xlsx`) with
**formulas**, not typed-in numbers, following the finance team's conventions
on the workbook's **Notes** sheet: what the variance is, when a row is
flagged, what the Total row holds{actual}.

Leave everything else as it is: the headers, the names and numbers, the
Total label, the other sheets and the sheet names.
{corners}
The checker recomputes your formulas itself and ignores values cached in the
file (openpyxl, which is installed, does not compute formulas). It
understands cell references (`D4`, `$D$4`, `Sheet!D4`), ranges (`D4:D9`),
arithmetic, comparisons, `&`, percentages and the functions SUM, MIN, MAX,
AVERAGE, ABS, ROUND, IF, AND, OR, NOT, COUNTIF and SUMIF.
"""


def _above_level_one(task_dir: Path, rng: random.Random, case: dict, rung: int, seed_case) -> None:
    """Levels 2-4 (:mod:`.ladder`): the Notes sheet, corner figures, the ledger."""
    import openpyxl
    from openpyxl.styles import Font

    path = task_dir / "environment" / "app" / "variance.xlsx"
    wb = openpyxl.load_workbook(path)
    ws = wb[case["sheet"]]
    if rung >= 4:  # the actuals come from the ledger: the column is emptied, the rows' actuals are the sums
        listed = {row[0] for row in case["rows"]}
        prefix = case["rows"][0][0].split("-")[0]
        others = [f"{prefix}-{c}" for c in rng.sample(range(100, 999), 6) if f"{prefix}-{c}" not in listed][:2]
        entries, actual = ladder.postings(rng, case["rows"], others)
        ledger = wb.create_sheet(ladder.LEDGER)
        for col, label in zip("ABCD", ("Code", "Posted", "Description", "Amount (EUR)")):
            ledger[f"{col}1"] = label
            ledger[f"{col}1"].font = Font(bold=True)
        for n, entry in enumerate(entries):
            for col, value in zip("ABCD", entry):
                ledger[f"{col}{n + 2}"] = value
        for i, row in enumerate(case["rows"]):
            row[4] = actual[row[0]]
            ws[f"{case['cols']['actual']}{case['first_row'] + i}"] = None
        case |= {
            "ledger": ladder.LEDGER,
            "ledger_amount_col": "D",
            "ledger_moved": [[code, rng.randrange(-50, 400) * 10] for code, _, _, _ in entries],
        }
    notes = wb.create_sheet(ladder.NOTES)
    for n, line in enumerate(ladder.notes(case, rung)):
        notes[f"A{n + 1}"] = line
    notes["A1"].font = Font(bold=True)
    common.save_workbook(wb, path)
    if rung >= 3:
        case["corners"] = [list(pair) for pair in ladder.corners(rng, len(case["rows"]), case["tolerance"])]
    text = LADDER_INSTRUCTION.format(
        sheet=case["sheet"],
        what=case["what"],
        ledger=" Its actuals are to come from the **Ledger** sheet." if rung >= 4 else "",
        actual=" and where an actual comes from" if rung >= 4 else "",
        corners=(
            "\nThe checker evaluates your formulas on the sheet's figures and again on\n"
            "other figures, corners included: a budget of 0, a variance exactly at the\n"
            "limit, a negative actual (a credit).\n"
            if rung >= 3
            else ""
        ),
    )
    common.write(task_dir / "instruction.md", common.reflow(text))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.OPENPYXL_PIN))
    # xlsx_ladder_solve.py borrows xlsx_solve.py's formula writing (common.with_borrowed): each is one task's whole
    # reference solution, copied alone into the task, where it can import neither the other nor autoenv.
    common.write_python_solution(
        task_dir, FILES / "xlsx_ladder_solve.py", {"workbook": case["workbook"], "sheet": case["sheet"]}
    )
    common.write_tests(task_dir, FILES / "xlsx_tests.py", case, common.FORMULA_EVAL_PATH)
    tests = task_dir / "tests" / "test_outputs.py"
    text = tests.read_text()
    if rung >= 4:  # the actuals are formulas now: the inputs left unchanged are the first four columns
        text = ladder.inputs_without_actual(text)
    tests.write_text(text + (ladder.TESTS if rung >= 3 else "") + (ladder.LEDGER_TESTS if rung >= 4 else ""))

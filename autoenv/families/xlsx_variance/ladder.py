"""xlsx-variance above level 1: conventions on the workbook's Notes sheet, corner figures, actuals from a ledger.

Level 2 tells neither the layout (header, data and Total rows, which column is which) nor the rules (the
variance's sign, the tolerance, what the Total row holds): the sheet shows the layout, and the finance team's
conventions are on the workbook's **Notes** sheet. Level 3 has the tests evaluate the formulas a third time, on
figures with the corners real sheets have (a budget of 0, a variance exactly at the limit, a credit: a negative
actual), which a division by the budget or a ``>=`` gets wrong. Level 4 leaves the Actual column empty: an actual
is the sum of the Ledger sheet's postings to the row's code (none: 0; postings to codes the sheet does not list
count nowhere), and the tests move the ledger's amounts too.
"""

from __future__ import annotations

import random
from typing import Any

NOTES = "Notes"
LEDGER = "Ledger"


def notes(case: dict[str, Any], rung: int) -> list[str]:
    """The Notes sheet's lines (column A): the conventions the level-1 instruction spells out, and more.

    "More than x% of the budget" would be undefined for a negative budget; no figure the sheet or the tests use
    has one (:func:`corners`, the level-1 draws), and the Status line says so."""
    lines = [
        "Conventions of group finance for the budget sheets",
        "",
        f"Variance: {case['definition']}.",
        f"Status: the text CHECK when the absolute variance is more than {case['tolerance'] * 100:g}% of the row's "
        "budget, the text OK otherwise. Budgets are never negative (a budget of 0 is a budget like any other).",
        "Total row: under Budget, Actual and Variance the sum of the rows above; under Status the number of rows "
        "flagged CHECK.",
        "Every cell you complete holds a formula, so that the sheet stays right when a figure changes.",
    ]
    if rung >= 4:
        lines.insert(
            3,
            f"Actual: the sum of the amounts the {LEDGER} sheet posts to the row's code (0 when it posts none); "
            "the Actual column is a formula too.",
        )
    return lines


def corners(rng: random.Random, n: int, tolerance: float) -> list[tuple[int, int]]:
    """(budget, actual) for every row, with the corners first: a variance exactly at the limit (OK), a budget of
    0 with an actual (CHECK) and without (OK), a credit (negative actual); the rest ordinary figures. No budget
    is negative (the Notes sheet says so: its Status rule is undefined for one)."""
    limit = int(tolerance * 2000)
    rows = [
        (2000, 2000 + rng.choice([-1, 1]) * limit),
        (0, rng.randrange(1, 50) * 10),
        (0, 0),
        (rng.randrange(10, 30) * 100, -rng.randrange(1, 40) * 10),
    ]
    while len(rows) < n:
        budget = rng.randrange(50, 2500) * 100
        rows.append((budget, int(round(budget * (1 + rng.uniform(-0.3, 0.3)), -1))))
    rng.shuffle(rows)
    return rows[:n]


def postings(
    rng: random.Random, rows: list[list[Any]], others: list[str]
) -> tuple[list[tuple[str, str, str, int]], dict[str, int]]:
    """The Ledger's postings (code, date, text, amount) that add up to each row's actual, one row with none
    (its actual becomes 0), and postings to ``others`` (codes the sheet does not list). Also the actual by code."""
    texts = ["Invoice", "Credit note", "Accrual", "Card payment", "Reclass", "Invoice (late)"]
    empty = rng.randrange(len(rows))
    out, actual = [], {}
    for i, row in enumerate(rows):
        code, total = row[0], 0 if i == empty else row[4]
        actual[code] = total
        if i == empty:
            continue
        k = rng.randint(1, 4)
        cuts = (
            sorted(rng.randrange(-total // 10, total // 10 + 1) * 10 for _ in range(k - 1)) if total else [0] * (k - 1)
        )
        parts = [b - a for a, b in zip([0, *cuts], [*cuts, total])]
        out += [(code, "", rng.choice(texts), amount) for amount in parts]
    out += [(code, "", rng.choice(texts), rng.randrange(1, 400) * 10) for code in others for _ in range(2)]
    rng.shuffle(out)
    dated = [(c, f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", t, a) for c, _, t, a in out]
    return dated, actual


#: The line of level 1's tests (files/xlsx_tests.py) that lists the input columns a solver must leave unchanged.
INPUTS_LINE = 'zip(("code", "centre", "owner", "budget", "actual"), row)'


def inputs_without_actual(tests: str) -> str:
    """Level 1's tests with the Actual column out of the inputs left unchanged (level 4 fills it with formulas);
    level 1's file stays byte for byte what it was (its bundled task is compared with it)."""
    if INPUTS_LINE not in tests:
        raise RuntimeError(f"files/xlsx_tests.py no longer has {INPUTS_LINE!r}")
    return tests.replace(INPUTS_LINE, INPUTS_LINE.replace(', "actual")', ")"), 1)


# test_formulas_on_corner_figures has the shape of level 1's test_formulas_follow_their_inputs (files/xlsx_tests.py;
# duplicates lists the pair): a helper both called would change level 1's shipped tests, which the bundled tasks
# compare byte for byte.
TESTS = '''

# -- levels 3 and 4: corner figures, the ledger moved ---------------------------------------


def test_formulas_on_corner_figures(workbook):
    """A budget of 0, a variance exactly at the limit, a credit: the rules as the Notes sheet words them."""
    overrides = {}
    for i, (budget, actual) in enumerate(CASE["corners"]):
        r = CASE["first_row"] + i
        overrides[(CASE["sheet"], cell_ref("budget", r))] = budget
        overrides[(CASE["sheet"], cell_ref("actual", r))] = actual
    check_values(workbook, CASE["corners"], overrides)
'''

LEDGER_TESTS = '''

def test_actuals_are_formulas_over_the_ledger(workbook, sheet):
    """The Actual column follows the Ledger: other amounts on every posting, the actuals are their sums."""
    for i in range(len(CASE["rows"])):
        formula_of(sheet, cell_ref("actual", CASE["first_row"] + i))
    overrides, sums = {}, {}
    for n, (code, amount) in enumerate(CASE["ledger_moved"]):
        overrides[(CASE["ledger"], f"{CASE['ledger_amount_col']}{n + 2}")] = amount
        sums[code] = sums.get(code, 0) + amount
    rows = [(row[3], sums.get(row[0], 0)) for row in CASE["rows"]]
    check_values(workbook, rows, overrides)
'''

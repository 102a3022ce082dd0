"""Verifier of a variance-formulas task: reads /app/<workbook>.xlsx with openpyxl.

The variance, status and total cells must hold *formulas*, and the formulas
must compute the right values. Values are computed by the tests' own
evaluator (``formula_eval.py``, next to this file): the task image has no
spreadsheet application, and values cached in the file would be whatever the
writer put there (openpyxl writes none). The formulas are evaluated twice:
on the sheet's numbers, and with every budget/actual replaced by other
numbers for which every row's status flips and the totals change, so a pasted
value, or a constant dressed up as a formula (``=1234``, ``="CHECK"``), fails
the second pass. autoenv's tests/office check with
LibreOffice that this evaluator agrees with a real spreadsheet application on
the reference solution.
"""

import math
import os
from pathlib import Path

import openpyxl
import pytest

from formula_eval import Evaluator, FormulaError, cells_from_workbook

CASE: dict = {}  # filled in by the generator

BOOK = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / CASE.get("workbook", "variance.xlsx")


def expected(rows):
    """Variance, status per row and the totals, from (budget, actual) pairs."""
    out = []
    for budget, actual in rows:
        variance = budget - actual if CASE["sign"] == "budget-actual" else actual - budget
        out.append((variance, "CHECK" if abs(variance) > CASE["tolerance"] * budget else "OK"))
    totals = {
        "budget": sum(b for b, _ in rows),
        "actual": sum(a for _, a in rows),
        "variance": sum(v for v, _ in out),
        "status": sum(1 for _, s in out if s == "CHECK"),
    }
    return out, totals


@pytest.fixture(scope="module")
def workbook():
    assert BOOK.is_file(), f"{BOOK} is missing"
    try:
        return openpyxl.load_workbook(BOOK)  # formulas, not cached values
    except Exception as exc:
        pytest.fail(f"{BOOK} is not a readable .xlsx: {exc}")


@pytest.fixture(scope="module")
def sheet(workbook):
    assert CASE["sheet"] in workbook.sheetnames, f"sheet {CASE['sheet']!r} is missing (found {workbook.sheetnames})"
    return workbook[CASE["sheet"]]


def cell_ref(key, row):
    return f"{CASE['cols'][key]}{row}"


def formula_of(sheet, ref):
    value = sheet[ref].value
    assert isinstance(value, str) and value.startswith("=") and len(value) > 1, f"{ref} must hold a formula, found {value!r}"
    return value


def close(a, b):
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def check_values(workbook, rows, overrides=None):
    evaluator = Evaluator(cells_from_workbook(workbook), overrides)
    per_row, totals = expected(rows)
    name = CASE["sheet"]
    try:
        for i, (variance, status) in enumerate(per_row):
            r = CASE["first_row"] + i
            got = evaluator.value(name, cell_ref("variance", r))
            assert close(got, variance), f"{cell_ref('variance', r)} computes {got!r}, expected {variance:g}"
            got = evaluator.value(name, cell_ref("status", r))
            assert got == status, f"{cell_ref('status', r)} computes {got!r}, expected {status!r}"
        t = CASE["total_row"]
        for key in ("budget", "actual", "variance", "status"):
            got = evaluator.value(name, cell_ref(key, t))
            assert close(got, totals[key]), f"{cell_ref(key, t)} (total {key}) computes {got!r}, expected {totals[key]:g}"
    except FormulaError as exc:
        pytest.fail(f"cannot evaluate a formula: {exc}")


def test_inputs_unchanged(sheet):
    for col, text in CASE["headers"].items():
        assert sheet[f"{col}{CASE['header_row']}"].value == text, f"header {col}{CASE['header_row']} changed"
    for i, row in enumerate(CASE["rows"]):
        r = CASE["first_row"] + i
        for key, value in zip(("code", "centre", "owner", "budget", "actual"), row):
            got = sheet[cell_ref(key, r)].value
            assert got == value, f"{cell_ref(key, r)} changed: {got!r} (was {value!r})"
    assert sheet[f"{CASE['cols']['centre']}{CASE['total_row']}"].value == "Total", "the Total label moved"


def test_cells_hold_formulas(sheet):
    for i in range(len(CASE["rows"])):
        r = CASE["first_row"] + i
        formula_of(sheet, cell_ref("variance", r))
        formula_of(sheet, cell_ref("status", r))
    for key in ("budget", "actual", "variance", "status"):
        formula_of(sheet, cell_ref(key, CASE["total_row"]))


def test_formulas_compute_the_sheet(workbook):
    check_values(workbook, [(row[3], row[4]) for row in CASE["rows"]])


def test_formulas_follow_their_inputs(workbook):
    """Change every budget and actual: the formulas must follow (no pasted results)."""
    overrides = {}
    for i, (budget, actual) in enumerate(CASE["perturbed"]):
        r = CASE["first_row"] + i
        overrides[(CASE["sheet"], cell_ref("budget", r))] = budget
        overrides[(CASE["sheet"], cell_ref("actual", r))] = actual
    check_values(workbook, CASE["perturbed"], overrides)

"""The spreadsheet tasks' formula evaluator (autoenv/families/office/formula_eval.py), copied into their tests."""

from __future__ import annotations

import pytest

from autoenv.families.office.formula_eval import Evaluator, FormulaError, references, tokenize


def value(formula, cells=None, sheet="S"):
    data = {
        ("S", "A1"): 10,
        ("S", "A2"): 4,
        ("S", "A3"): None,
        ("S", "B1"): "OK",
        ("S", "B2"): "check",
        ("My sheet", "C3"): 2.5,
    }
    data.update(cells or {})
    data[(sheet, "Z99")] = formula
    return Evaluator(data).value(sheet, "Z99")


@pytest.mark.parametrize(
    "formula, expected",
    [
        ("=A1-A2", 6.0),
        ("=$A$1*2+A2/4", 21.0),
        ("=-2^2", 4.0),  # Excel: unary minus binds tighter than ^
        ("=2^3^2", 64.0),  # and ^ is left-associative
        ("=10%*A1", 1.0),
        ("=SUM(A1:A3)+MIN(A1,A2)", 18.0),  # empty cells are skipped by aggregates, 0 in arithmetic
        ("=A3+1", 1.0),
        ("=MAX(A1:A3)-AVERAGE(A1:A2)", 3.0),
        ('=IF(ABS(A2-A1)>0.5*A1,"CHECK","OK")', "CHECK"),
        ('=IF(A1>A2,"yes")', "yes"),
        ('=COUNTIF(B1:B2,"CHECK")', 1.0),  # text criteria ignore case, like Excel
        ('=COUNTIF(A1:A3,">5")', 1.0),
        ('=SUMIF(B1:B2,"ok",A1:A2)', 10.0),
        ("=ROUND(2.5,0)+ROUND(-2.5,0)", 0.0),  # halves away from zero
        ("='My sheet'!C3*4", 10.0),
        ('=A1&"-"&B1', "10-OK"),
        ("=AND(A1>1,NOT(A2>5))", True),
        ("=OR(FALSE,A3)", False),
    ],
)
def test_values(formula, expected):
    assert value(formula) == expected


def test_chains_across_cells_and_sheets():
    cells = {("Inputs", "B3"): 100, ("S", "C1"): "=Inputs!$B$3*2", ("S", "C2"): "=C1+SUM(Inputs!B3:B3)"}
    assert value("=C2/3", cells) == pytest.approx(100.0)


def test_overrides_replace_inputs_without_touching_cells():
    cells = {("S", "A1"): 1, ("S", "A2"): "=A1*3"}
    assert Evaluator(cells, {("S", "A1"): 5}).value("S", "A2") == 15.0
    assert Evaluator(cells).value("S", "A2") == 3.0


@pytest.mark.parametrize(
    "formula, message",
    [
        ("=VLOOKUP(A1,A1:A2,1)", "VLOOKUP is not supported"),
        ("=A1/0", "division by zero"),
        ("=B1*2", "used as a number"),
        ("=A1:A2", "range is not a single value"),
        ("=SUM(A1", "expected"),
        ("=A1 +", "expected more"),
    ],
)
def test_errors_name_the_problem(formula, message):
    with pytest.raises(FormulaError, match=message):
        value(formula)


def test_circular_reference():
    cells = {("S", "A1"): "=A2+1", ("S", "A2"): "=A1+1"}
    with pytest.raises(FormulaError, match="circular"):
        Evaluator(cells).value("S", "A1")


def test_references_and_tokens():
    assert references("=SUM(D2:D3)+Inputs!$B$3") == {(None, "D2"), (None, "D3"), ("Inputs", "B3")}
    kinds = [k for k, _ in tokenize('=IF(A1>=2,"x",TRUE)')]
    assert kinds == ["func", "ref", "op", "number", "op", "string", "op", "bool", "op"]

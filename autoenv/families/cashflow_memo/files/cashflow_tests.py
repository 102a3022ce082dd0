"""Verifier of a cash-flow scenarios + memo task: a workbook (openpyxl) and a memo (python-docx).

Workbook: the Scenarios sheet must hold formulas that compute month-end cash
for each scenario from the Inputs sheet. They are evaluated with the tests'
own evaluator (``formula_eval.py``): once on the inputs as given, once with
every input changed, so a sheet of pasted numbers fails. Memo: it must state
each scenario's lowest month-end cash for the scenarios the decision rule
uses, and its recommendation must be the one the rule gives for these
numbers.
"""

import math
import os
import re
from pathlib import Path

import docx
import openpyxl
import pytest

from formula_eval import Evaluator, FormulaError, cells_from_workbook

CASE: dict = {}  # filled in by the generator

APP = Path(os.environ.get("OFFICE_TASK_DIR", "/app"))
BOOK = APP / "cashflow.xlsx"
MEMO = APP / "memo.docx"
OUT = "Scenarios"
NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\d,])")


def model(inputs):
    """Month-end cash per scenario (lists of 12) from a dict of input values."""
    out = {}
    for name, multiplier in inputs["multipliers"].items():
        cash, series = inputs["opening"], []
        for month, revenue in enumerate(inputs["revenue"], start=1):
            cash += revenue * multiplier * (1 - inputs["variable"]) - inputs["fixed"]
            if month == inputs["invest_month"]:
                cash -= inputs["investment"]
            series.append(cash)
        out[name] = series
    return out


def recommendation(inputs):
    lows = model(inputs)
    return "PROCEED" if all(min(lows[s]) >= inputs["covenant"] for s in CASE["rule_scenarios"]) else "DEFER"


def overrides_for(inputs):
    cells = CASE["cells"]
    out = {("Inputs", cells[key]): inputs[key] for key in ("opening", "covenant", "variable", "fixed", "investment", "invest_month")}
    for name, ref in cells["multipliers"].items():
        out[("Inputs", ref)] = inputs["multipliers"][name]
    for i, value in enumerate(inputs["revenue"]):
        out[("Inputs", f"{cells['revenue_col']}{cells['revenue_first_row'] + i}")] = value
    return out


@pytest.fixture(scope="module")
def workbook():
    assert BOOK.is_file(), f"{BOOK} is missing"
    try:
        return openpyxl.load_workbook(BOOK)
    except Exception as exc:
        pytest.fail(f"{BOOK} is not a readable .xlsx: {exc}")


@pytest.fixture(scope="module")
def memo_text():
    assert MEMO.is_file(), f"{MEMO} is missing"
    try:
        document = docx.Document(str(MEMO))
    except Exception as exc:
        pytest.fail(f"{MEMO} is not a readable .docx: {exc}")
    paragraphs = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            paragraphs.append(" | ".join(cell.text for cell in row.cells))
    return [p for p in paragraphs if p.strip()]


def close(a, b):
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def check_scenarios(workbook, inputs, overrides=None):
    evaluator = Evaluator(cells_from_workbook(workbook), overrides)
    want = model(inputs)
    try:
        for j, name in enumerate(CASE["scenarios"]):
            col = "BCD"[j]
            for month in range(1, 13):
                got = evaluator.value(OUT, f"{col}{month + 1}")
                assert close(got, want[name][month - 1]), f"{OUT}!{col}{month + 1} ({name}, month {month}) computes {got!r}, expected {want[name][month - 1]:.2f}"
            got = evaluator.value(OUT, f"{col}14")
            assert close(got, min(want[name])), f"{OUT}!{col}14 (lowest {name} cash) computes {got!r}, expected {min(want[name]):.2f}"
    except FormulaError as exc:
        pytest.fail(f"cannot evaluate a formula: {exc}")


def test_inputs_unchanged(workbook):
    assert "Inputs" in workbook.sheetnames, "the Inputs sheet is missing"
    ws = workbook["Inputs"]
    for ref, value in CASE["input_cells"].items():
        assert ws[ref].value == value, f"Inputs!{ref} changed: {ws[ref].value!r} (was {value!r})"


def test_scenarios_layout(workbook):
    assert OUT in workbook.sheetnames, f"sheet {OUT!r} is missing (found {workbook.sheetnames})"
    ws = workbook[OUT]
    assert [ws[f"{c}1"].value for c in "ABCD"] == ["Month", *CASE["scenarios"]], "row 1 must read Month and the scenario names"
    assert [ws[f"A{m + 1}"].value for m in range(1, 13)] == list(range(1, 13)), "A2:A13 must hold the month numbers 1-12"
    assert ws["A14"].value == "Lowest", "A14 must read Lowest"
    for col in "BCD":
        for row in range(2, 15):
            value = ws[f"{col}{row}"].value
            assert isinstance(value, str) and value.startswith("=") and len(value) > 1, f"{OUT}!{col}{row} must hold a formula, found {value!r}"


def test_scenarios_compute_the_inputs(workbook):
    check_scenarios(workbook, CASE["inputs"])


def test_scenarios_follow_the_inputs(workbook):
    """Every input changed at once: the formulas must follow (a sheet of pasted numbers does not)."""
    check_scenarios(workbook, CASE["perturbed"], overrides_for(CASE["perturbed"]))


def test_memo_recommendation_agrees_with_numbers(memo_text):
    lines = [p for p in memo_text if p.strip().lower().startswith("recommendation:")]
    assert len(lines) == 1, f"the memo needs exactly one paragraph starting 'Recommendation:' (found {len(lines)})"
    words = set(re.findall(r"\b(PROCEED|DEFER)\b", lines[0].upper()))
    assert len(words) == 1, f"the recommendation must be exactly one of PROCEED or DEFER: {lines[0]!r}"
    want = recommendation(CASE["inputs"])
    assert words == {want}, f"the memo recommends {words.pop()}, but the numbers say {want}"


def test_memo_states_lowest_cash(memo_text):
    lows = {name: min(series) for name, series in model(CASE["inputs"]).items()}
    for name in CASE["rule_scenarios"]:
        mentioned = [p for p in memo_text if name.lower() in p.lower()]
        assert mentioned, f"the memo never mentions the {name} scenario"
        numbers = [float(n.replace(",", "")) for p in mentioned for n in NUMBER.findall(p)]
        assert any(abs(n - lows[name]) <= 1.0 for n in numbers), (
            f"no paragraph mentioning {name} states its lowest month-end cash (about {lows[name]:,.0f}); numbers found: {numbers[:12]}")

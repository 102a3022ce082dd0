"""Family ``cashflow-memo``: a scenario cash-flow sheet (formulas) and a memo whose recommendation follows from it.

Two deliverables that must agree: ``cashflow.xlsx`` gets a live Scenarios
sheet driven by its Inputs sheet, and ``memo.docx`` states the lowest
month-end cash of the scenarios the decision rule looks at and the
recommendation the rule gives. Randomised: every input, the order of the
input rows, the investment month, and which way the decision goes (the
generator draws inputs until the rule's margin is clear, so rounding in the
memo cannot flip it).

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) leave the model, the layout, the rule and the memo's form to the
finance team's notes, then ask for a memo program the tests run on unseen workbooks, then add memo lines; level 1
is the task above, unchanged.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from autoenv.families.cashflow_memo import ladder
from autoenv.families.levels import load_ladder
from autoenv.families.office import common

NAME = "cashflow-memo"
DESCRIPTION = "a live cash-flow scenario sheet and a memo whose recommendation follows from it"
KEYWORDS = ("cash flow", "cashflow", "scenario", "memo", "recommendation", "finance", "forecast", "covenant")
FILES = Path(__file__).with_name("files")
SCENARIOS = ["Base", "Downside", "Upside"]
RULE_SCENARIOS = ["Base", "Downside"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
PROJECTS = [
    ("a second packing line", "the packing-line investment"),
    ("a new regional warehouse", "the warehouse investment"),
    ("an ERP replacement", "the ERP investment"),
    ("a solar roof for the plant", "the solar-roof investment"),
    ("an additional delivery fleet", "the fleet investment"),
]
LADDER, DEFAULT_LEVEL = load_ladder(__file__)
#: The kinds of unseen workbook the tests of levels 3 and 4 run the memo program on (:func:`.ladder.unseen`).
UNSEEN = ("negative", "covenant", "half")

LABELS = {
    "opening": "Opening cash",
    "covenant": "Minimum cash (bank covenant)",
    "variable": "Variable costs (share of revenue)",
    "fixed": "Fixed costs per month",
    "investment": "Investment outflow",
    "invest_month": "Investment month (1-12)",
}


def _draw_inputs(rng: random.Random) -> dict:
    opening = rng.randrange(150, 400) * 1000
    base_revenue = rng.randrange(120, 260) * 1000
    seasonality = [1 + 0.18 * rng.uniform(-1, 1) for _ in range(12)]
    variable = rng.choice([0.32, 0.35, 0.38, 0.4, 0.42, 0.45])
    margin = base_revenue * (1 - variable)
    return {
        "opening": opening,
        "covenant": rng.randrange(40, 120) * 1000,
        "variable": variable,
        "fixed": int(round(margin * rng.uniform(0.82, 1.0), -3)),
        "investment": rng.randrange(100, 350) * 1000,
        "invest_month": rng.randrange(2, 11),
        "multipliers": {
            "Base": 1.0,
            "Downside": rng.choice([0.8, 0.82, 0.85, 0.88, 0.9]),
            "Upside": rng.choice([1.08, 1.1, 1.12, 1.15]),
        },
        "revenue": [int(round(base_revenue * s, -2)) for s in seasonality],
    }


def _lows(inputs: dict) -> dict[str, float]:
    out = {}
    for name, multiplier in inputs["multipliers"].items():
        cash, low = inputs["opening"], None
        for month, revenue in enumerate(inputs["revenue"], start=1):
            cash += revenue * multiplier * (1 - inputs["variable"]) - inputs["fixed"]
            if month == inputs["invest_month"]:
                cash -= inputs["investment"]
            low = cash if low is None else min(low, cash)
        out[name] = low
    return out


def _clear(inputs: dict, want_proceed: bool | None) -> bool:
    """Lows positive, and the decision clear of the covenant by a margin (and the wanted way, if given)."""
    lows = _lows(inputs)
    if min(lows.values()) <= 5000:
        return False
    gaps = [lows[s] - inputs["covenant"] for s in RULE_SCENARIOS]
    if any(abs(g) < 0.04 * inputs["covenant"] + 2000 for g in gaps):
        return False
    proceed = all(g >= 0 for g in gaps)
    return want_proceed is None or proceed == want_proceed


def draw(rng: random.Random, want_proceed: bool | None) -> dict:
    for _ in range(20000):
        inputs = _draw_inputs(rng)
        if _clear(inputs, want_proceed):
            return inputs
    raise RuntimeError("could not draw cash-flow inputs with a clear decision")  # pragma: no cover


def draw_perturbed(rng: random.Random, inputs: dict) -> dict:
    """Inputs for the verifier's second pass: every value differs (Base's multiplier and the
    investment month included) and the decision flips, so nothing typed in survives it."""
    for _ in range(20000):
        p = _draw_inputs(rng)
        p["multipliers"]["Base"] = rng.choice([0.96, 0.98, 1.02, 1.04])
        differs = all(
            p[k] != inputs[k] for k in ("opening", "covenant", "variable", "fixed", "investment", "invest_month")
        )
        differs = differs and all(p["multipliers"][s] != inputs["multipliers"][s] for s in SCENARIOS)
        differs = differs and all(a != b for a, b in zip(p["revenue"], inputs["revenue"]))
        proceed = all(low >= inputs["covenant"] for name, low in _lows(inputs).items() if name in RULE_SCENARIOS)
        if differs and _clear(p, not proceed):
            return p
    raise RuntimeError("could not draw perturbed inputs")  # pragma: no cover


def build_workbook(rng: random.Random, path: Path) -> dict:
    want_proceed = rng.random() < 0.5
    inputs = draw(rng, want_proceed)
    perturbed = draw_perturbed(rng, inputs)
    order = list(LABELS)
    rng.shuffle(order)
    cells, input_cells = write_inputs(path, inputs, order)
    return {
        "inputs": inputs,
        "perturbed": perturbed,
        "cells": cells,
        "input_cells": input_cells,
        "scenarios": SCENARIOS,
        "rule_scenarios": RULE_SCENARIOS,
    }


def write_inputs(path: Path, inputs: dict, order: list[str]) -> tuple[dict, dict]:
    """Write a workbook whose Inputs sheet holds ``inputs`` (its single inputs in ``order``); return where each
    input is and every filled cell's value."""
    from openpyxl.styles import Font

    wb = common.new_workbook()
    ws = wb.active
    ws.title = "Inputs"
    ws["A1"] = "Cash-flow model: inputs"
    ws["A1"].font = Font(bold=True, size=13)
    cells: dict = {}
    for i, key in enumerate(order):
        r = 3 + i
        ws[f"A{r}"] = LABELS[key]
        ws[f"B{r}"] = inputs[key]
        ws[f"B{r}"].number_format = "0%" if key == "variable" else ("0" if key == "invest_month" else "#,##0")
        cells[key] = f"B{r}"
    r = 3 + len(order) + 1
    ws[f"A{r}"], ws[f"B{r}"] = "Scenario", "Revenue multiplier"
    ws[f"A{r}"].font = ws[f"B{r}"].font = Font(bold=True)
    cells["multipliers"] = {}
    for j, name in enumerate(inputs["multipliers"]):  # the scenarios in the inputs' order
        ws[f"A{r + 1 + j}"] = name
        ws[f"B{r + 1 + j}"] = inputs["multipliers"][name]
        ws[f"B{r + 1 + j}"].number_format = "0.00"
        cells["multipliers"][name] = f"B{r + 1 + j}"
    r = r + 1 + len(inputs["multipliers"]) + 1
    ws[f"A{r}"], ws[f"B{r}"], ws[f"C{r}"] = "Month", "Baseline revenue", "Month name"
    for cell in (ws[f"A{r}"], ws[f"B{r}"], ws[f"C{r}"]):
        cell.font = Font(bold=True)
    cells["revenue_col"], cells["revenue_first_row"] = "B", r + 1
    for m in range(12):
        ws[f"A{r + 1 + m}"] = m + 1
        ws[f"B{r + 1 + m}"] = inputs["revenue"][m]
        ws[f"B{r + 1 + m}"].number_format = "#,##0"
        ws[f"C{r + 1 + m}"] = MONTHS[m]
    ws.column_dimensions["A"].width = 34
    ws.column_dimensions["B"].width = 20
    ws.column_dimensions["C"].width = 14
    input_cells = {cell.coordinate: cell.value for row in ws.iter_rows() for cell in row if cell.value is not None}
    common.save_workbook(wb, path)
    return cells, input_cells


INSTRUCTION = """\
# Cash-flow scenarios and an investment memo

The finance team must decide whether to go ahead with {project} this year.
`/app/cashflow.xlsx` has an **Inputs** sheet: opening cash, the bank's
minimum-cash covenant, variable costs as a share of revenue, fixed costs per
month, the investment outflow and the month it is paid, a revenue multiplier
for each scenario (Base, Downside, Upside) and the baseline revenue of each
month 1-12.

Month-end cash of a scenario is computed month by month: start from the
opening cash; each month add the month's baseline revenue times the
scenario's multiplier times (1 - variable cost share), subtract the fixed
costs, and in the investment month also subtract the investment outflow.

Produce two deliverables:

1. **Workbook.** Add a sheet named `Scenarios` to `/app/cashflow.xlsx` (keep
   the Inputs sheet unchanged) with this layout: row 1 reads `Month`, `Base`,
   `Downside`, `Upside` in A1:D1; A2:A13 hold the month numbers 1 to 12;
   B2:D13 hold each scenario's month-end cash; row 14 has `Lowest` in A14
   and each scenario's lowest month-end cash in B14:D14. Cells B2:D14 must
   be **formulas** that reference the Inputs sheet, so the model stays
   correct when any input (including the investment month) changes. The
   checker recomputes the formulas itself (it ignores cached values) and
   understands cell references with or without `$` and a sheet name
   (`Inputs!$B$3`), ranges, arithmetic, comparisons and the functions SUM,
   MIN, MAX, AVERAGE, ABS, ROUND, IF, AND, OR, NOT, COUNTIF and SUMIF.

2. **Memo.** Write `/app/memo.docx`, a short Word memo to the finance
   director. It must contain exactly one paragraph that starts with
   `Recommendation:` followed by `PROCEED` or `DEFER`, and, for the Base and
   the Downside scenario, a sentence that names the scenario and states its
   lowest month-end cash as a whole number (for example `84,250`).
   The rule: recommend `PROCEED` only if the lowest month-end cash of both
   the Base and the Downside scenario is at least the covenant minimum;
   otherwise recommend `DEFER`.

openpyxl and python-docx are installed.
"""


def generate(task_dir: Path, rng: random.Random, seed_case=None, level: int = DEFAULT_LEVEL) -> None:
    """A cashflow-memo task of ``level`` (:data:`LADDER`); level 1 writes exactly the tasks of earlier releases."""
    task_dir = Path(task_dir)
    project, _ = rng.choice(PROJECTS)
    case = build_workbook(rng, task_dir / "environment" / "app" / "cashflow.xlsx")
    while level >= 3 and ladder.near_a_half(case["inputs"]):  # the shipped memo's amounts: no rounding corner
        case = build_workbook(rng, task_dir / "environment" / "app" / "cashflow.xlsx")
    if level >= 2:
        _above_level_one(task_dir, rng, case, project, level, seed_case)
        return
    common.write(task_dir / "instruction.md", common.reflow(INSTRUCTION.format(project=project)))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.OPENPYXL_PIN, common.DOCX_PIN))
    solve_case = {k: case[k] for k in ("scenarios", "rule_scenarios")}
    # The solution and the tests each compute the cash model (duplicates lists the pair): they are shipped apart (the
    # tests only to the verifier) and a grader that imported the solution's code would share its mistakes.
    common.write_python_solution(task_dir, FILES / "cashflow_solve.py", solve_case)
    common.write_tests(task_dir, FILES / "cashflow_tests.py", case, common.FORMULA_EVAL_PATH)


def _above_level_one(task_dir: Path, rng: random.Random, case: dict, project: str, level: int, seed_case) -> None:
    """Levels 2-4 (:mod:`.ladder`): the notes; from level 3 the memo program, run on unseen workbooks."""
    import shutil
    import tempfile

    app = task_dir / "environment" / "app"
    common.write(app / ladder.NOTES, ladder.notes(level, RULE_SCENARIOS))
    common.write(task_dir / "instruction.md", ladder.instruction(level, project))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.OPENPYXL_PIN, common.DOCX_PIN))
    program = common.solution_source(
        FILES / "cashflow_ladder_solve.py", {"level": level, "rule_scenarios": RULE_SCENARIOS}
    )
    if level == 2:
        common.write(task_dir / "solution" / "solve.sh", common.solve_sh(), executable=True)
        common.write(task_dir / "solution" / "solve.py", program)
        common.write_tests(task_dir, FILES / "cashflow_tests.py", case, common.FORMULA_EVAL_PATH)
        return
    with tempfile.TemporaryDirectory() as tmp:
        books = {"shipped.xlsx": Path(tmp) / "shipped.xlsx"}
        shutil.copyfile(app / "cashflow.xlsx", books["shipped.xlsx"])
        memos = {"shipped.xlsx": ladder.memo_lines(case["inputs"], RULE_SCENARIOS, level, MONTHS)}
        for n, kind in enumerate(UNSEEN, start=1):
            inputs = ladder.unseen(rng, kind)
            books[f"unseen-{n}.xlsx"] = Path(tmp) / f"unseen-{n}.xlsx"
            ladder.write_unseen(books[f"unseen-{n}.xlsx"], inputs, rng, sys.modules[__name__])
            memos[f"unseen-{n}.xlsx"] = ladder.memo_lines(inputs, RULE_SCENARIOS, level, MONTHS)
        common.write_tests(
            task_dir,
            FILES / "cashflow_tests.py",
            case | {"memos": memos},
            common.FORMULA_EVAL_PATH,
            *books.values(),
            unprivileged=True,
        )
    tests = task_dir / "tests" / "test_outputs.py"
    tests.write_text(tests.read_text() + ladder.TESTS)
    common.write_program_solution(task_dir, program, "/app/make_memo.py")

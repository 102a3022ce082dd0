"""Reference solution of a cash-flow scenarios + memo task: formulas with openpyxl, memo with python-docx.

It finds the inputs by their labels on the Inputs sheet, so it knows no more
than the instruction and the workbook tell (the scripted solver's recipe for
this family runs the same program).
"""

import os
from pathlib import Path

import docx
import openpyxl

CASE: dict = {}  # filled in by the generator

APP = Path(os.environ.get("OFFICE_TASK_DIR", "/app"))
BOOK = APP / "cashflow.xlsx"
MEMO = APP / "memo.docx"


LABELS = {  # words of the Inputs sheet's labels in column A -> input
    "opening": ("opening cash",),
    "covenant": ("covenant",),
    "variable": ("variable",),
    "fixed": ("fixed cost",),
    "investment": ("investment outflow",),
    "invest_month": ("investment month",),
}


def find_cells(ws):
    """Where each input is, found by its label in column A (as a person reading the sheet would)."""
    cells, multipliers, revenue_row = {}, {}, None
    for row in ws.iter_rows(min_col=1, max_col=2):
        label, value = row[0].value, row[1]
        if not isinstance(label, str):
            continue
        text = label.strip().lower()
        for key, words in LABELS.items():
            if key not in cells and any(w in text for w in words) and isinstance(value.value, (int, float)):
                cells[key] = value.coordinate
        if label.strip() in CASE["scenarios"] and isinstance(value.value, (int, float)):
            multipliers[label.strip()] = value.coordinate
        if text == "month" and revenue_row is None:
            revenue_row = row[0].row + 1
    missing = sorted(set(LABELS) - set(cells)) + sorted(set(CASE["scenarios"]) - set(multipliers))
    if missing or revenue_row is None:
        raise SystemExit(f"cannot find these inputs on the Inputs sheet: {missing or ['monthly revenue']}")
    cells["multipliers"] = multipliers
    cells["revenue_col"], cells["revenue_first_row"] = "B", revenue_row
    return cells


def read_inputs(ws, c):
    inputs = {key: ws[c[key]].value for key in LABELS}
    inputs["multipliers"] = {name: ws[ref].value for name, ref in c["multipliers"].items()}
    inputs["revenue"] = [ws[f"{c['revenue_col']}{c['revenue_first_row'] + i}"].value for i in range(12)]
    return inputs


def abs_ref(ref):
    col = "".join(ch for ch in ref if ch.isalpha())
    row = "".join(ch for ch in ref if ch.isdigit())
    return f"Inputs!${col}${row}"


def main():
    wb = openpyxl.load_workbook(BOOK)
    c = find_cells(wb["Inputs"])
    inputs = read_inputs(wb["Inputs"], c)
    ws = wb.create_sheet("Scenarios")
    ws.append(["Month", *CASE["scenarios"]])
    for month in range(1, 13):
        row = [month]
        for j, name in enumerate(CASE["scenarios"]):
            col = "BCD"[j]
            previous = abs_ref(c["opening"]) if month == 1 else f"{col}{month}"
            revenue = f"Inputs!${c['revenue_col']}${c['revenue_first_row'] + month - 1}"
            row.append(
                f"={previous}+{revenue}*{abs_ref(c['multipliers'][name])}*(1-{abs_ref(c['variable'])})"
                f"-{abs_ref(c['fixed'])}-IF($A{month + 1}={abs_ref(c['invest_month'])},{abs_ref(c['investment'])},0)"
            )
        ws.append(row)
    ws.append(["Lowest", *[f"=MIN({col}2:{col}13)" for col in "BCD"]])
    wb.save(BOOK)

    # the same model in Python for the memo's figures
    lows = {}
    for name, multiplier in inputs["multipliers"].items():
        cash, series = inputs["opening"], []
        for month, revenue in enumerate(inputs["revenue"], start=1):
            cash += revenue * multiplier * (1 - inputs["variable"]) - inputs["fixed"]
            if month == inputs["invest_month"]:
                cash -= inputs["investment"]
            series.append(cash)
        lows[name] = (min(series), series.index(min(series)) + 1)
    ok = all(lows[s][0] >= inputs["covenant"] for s in CASE["rule_scenarios"])
    memo = docx.Document()
    memo.add_heading("Investment decision: cash-flow scenarios", level=1)
    memo.add_paragraph(f"Recommendation: {'PROCEED' if ok else 'DEFER'}")
    for name in CASE["scenarios"]:
        low, month = lows[name]
        memo.add_paragraph(f"{name} scenario: lowest month-end cash {low:,.0f} in month {month}.")
    memo.add_paragraph(
        f"The covenant requires at least {inputs['covenant']:,.0f} at every month end; "
        + ("both Base and Downside stay above it." if ok else "the plan breaches it, so the investment should wait.")
    )
    memo.save(str(MEMO))
    print({name: round(low) for name, (low, _) in lows.items()}, "PROCEED" if ok else "DEFER")


if __name__ == "__main__":
    main()

"""Reference program of a cash-flow task above level 1: the finance team's notes, for any workbook.

``python3 make_memo.py BOOK MEMO`` writes the memo of the workbook BOOK to MEMO; with no arguments it adds the
Scenarios sheet (formulas) to /app/cashflow.xlsx and writes /app/memo.docx. Inputs are found by their labels on the
Inputs sheet, the scenarios under its `Scenario` header, the month names in the revenue table's third column.
Amounts follow the notes: whole euros, halves away from zero, negative in parentheses; the lowest cash's month is
the first month it is reached; the ranking keeps the Inputs order for ties (a stable sort).
"""

import math
import os
import sys
from pathlib import Path

import docx
import openpyxl

CASE: dict = {}  # filled in by the generator

APP = Path(os.environ.get("OFFICE_TASK_DIR", "/app"))
LABELS = {  # words of the Inputs sheet's labels in column A -> input
    "opening": "opening cash",
    "covenant": "covenant",
    "variable": "variable",
    "fixed": "fixed cost",
    "investment": "investment outflow",
    "invest_month": "investment month",
}


def layout(ws):
    """Where each input is: (cells by key, multiplier cell by scenario in sheet order, first revenue row)."""
    cells, scenarios, revenue_row, in_scenarios = {}, {}, None, False
    for row in ws.iter_rows(min_col=1, max_col=2):
        label, value = row[0].value, row[1]
        if not isinstance(label, str):
            continue
        text = label.strip().lower()
        if text == "month":
            revenue_row, in_scenarios = row[0].row + 1, False
            break
        if in_scenarios and isinstance(value.value, (int, float)):
            scenarios[label.strip()] = value.coordinate
        if text == "scenario":
            in_scenarios = True
        for key, words in LABELS.items():
            if key not in cells and words in text and isinstance(value.value, (int, float)):
                cells[key] = value.coordinate
    if set(cells) != set(LABELS) or not scenarios or revenue_row is None:
        raise SystemExit(f"cannot find every input on the Inputs sheet: {sorted(set(LABELS) - set(cells))}")
    return cells, scenarios, revenue_row


def money(x):
    n = math.floor(abs(x) + 0.5)
    return f"({n:,})" if x < 0 and n else f"{n:,}"


def memo(book, out):
    ws = openpyxl.load_workbook(book)["Inputs"]
    cells, scenarios, first = layout(ws)
    value = {key: ws[ref].value for key, ref in cells.items()}
    revenue = [ws[f"B{first + m}"].value for m in range(12)]
    names = [ws[f"C{first + m}"].value for m in range(12)]
    cash = {}
    for name, ref in scenarios.items():
        total, months = value["opening"], []
        for month, rev in enumerate(revenue, start=1):
            total += rev * ws[ref].value * (1 - value["variable"]) - value["fixed"]
            if month == value["invest_month"]:
                total -= value["investment"]
            months.append(total)
        cash[name] = months
    lows = {name: min(months) for name, months in cash.items()}
    rule = CASE["rule_scenarios"]
    proceed = all(lows[name] >= value["covenant"] for name in rule)
    document = docx.Document()
    document.add_heading("Investment decision: cash-flow scenarios", level=1)
    document.add_paragraph(f"Recommendation: {'PROCEED' if proceed else 'DEFER'}")
    for name, months in cash.items():
        month = names[months.index(lows[name])]
        document.add_paragraph(f"{name}: lowest month-end cash {money(lows[name])} in {month}.")
    if CASE["level"] >= 4:
        document.add_paragraph("Ranking: " + ", ".join(sorted(cash, key=lambda name: lows[name])))
        document.add_paragraph("Headroom: " + money(min(lows[name] - value["covenant"] for name in rule)))
    document.save(str(out))
    print({name: money(low) for name, low in lows.items()}, "PROCEED" if proceed else "DEFER")


def absolute(ref):
    col = "".join(ch for ch in ref if ch.isalpha())
    return f"Inputs!${col}${''.join(ch for ch in ref if ch.isdigit())}"


def scenarios_sheet(book):
    wb = openpyxl.load_workbook(book)
    cells, scenarios, first = layout(wb["Inputs"])
    ws = wb.create_sheet("Scenarios")
    ws.append(["Month", *scenarios])
    a = {key: absolute(ref) for key, ref in cells.items()}
    for month in range(1, 13):
        row = [month]
        for j, ref in enumerate(scenarios.values()):
            col = "BCD"[j]
            previous = a["opening"] if month == 1 else f"{col}{month}"
            row.append(
                f"={previous}+Inputs!$B${first + month - 1}*{absolute(ref)}*(1-{a['variable']})-{a['fixed']}"
                f"-IF($A{month + 1}={a['invest_month']},{a['investment']},0)"
            )
        ws.append(row)
    ws.append(["Lowest", *[f"=MIN({col}2:{col}13)" for col in "BCD"[: len(scenarios)]]])
    wb.save(book)


def main():
    if len(sys.argv) == 3:
        memo(sys.argv[1], sys.argv[2])
        return
    scenarios_sheet(APP / "cashflow.xlsx")
    memo(APP / "cashflow.xlsx", APP / "memo.docx")


if __name__ == "__main__":
    main()

"""Reference solution of a variance-formulas task above level 1: finds the layout on the sheet and the rules on
the Notes sheet (and, where the Notes say so, the actuals on the Ledger sheet), then writes the formulas."""

import os
import re
from pathlib import Path

import openpyxl

CASE: dict = {}  # filled in by the generator

BOOK = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / CASE.get("workbook", "variance.xlsx")


def layout(ws):
    """(header row, column letter by lower-case label, Total row): the row holding the four labels, the row
    below it whose cell says Total."""
    for row in ws.iter_rows():
        labels = {str(c.value).strip().lower(): c.column_letter for c in row if c.value is not None}
        if {"budget", "actual", "variance", "status"} <= set(labels):
            header = row[0].row
            break
    else:
        raise SystemExit("no header row with Budget, Actual, Variance and Status")
    total = next(c.row for row in ws.iter_rows(min_row=header + 1) for c in row if c.value == "Total")
    return header, labels, total


# borrowed from xlsx_solve.py: write_formulas


def main():
    wb = openpyxl.load_workbook(BOOK)
    ws = wb[CASE["sheet"]]
    notes = " ".join(str(c.value) for c in wb["Notes"]["A"] if c.value)
    header, cols, total = layout(ws)
    first, last = header + 1, total - 1
    tolerance = float(re.search(r"more than ([\d.]+)%", notes).group(1)) / 100
    b, a = cols["budget"], cols["actual"]
    left, right = (b, a) if re.search(r"Variance: Budget minus Actual", notes, re.I) else (a, b)
    if re.search(r"Actual: the sum of the amounts the (\w+) sheet posts", notes):
        ledger = wb[re.search(r"Actual: the sum of the amounts the (\w+) sheet posts", notes).group(1)]
        head = {str(c.value).strip().lower(): c.column_letter for c in ledger[1] if c.value is not None}
        code = head["code"]
        amount = next(col for label, col in head.items() if label.startswith("amount"))
        end = ledger.max_row
        codes = f"{ledger.title}!${code}$2:${code}${end}"
        amounts = f"{ledger.title}!${amount}$2:${amount}${end}"
        for r in range(first, last + 1):
            ws[f"{a}{r}"] = f"=SUMIF({codes},{cols['code']}{r},{amounts})"
    write_formulas(ws, cols, first, last, total, left, right, tolerance)
    wb.save(BOOK)
    print(f"wrote formulas to {BOOK} rows {first}-{last}, totals in row {total}")


if __name__ == "__main__":
    main()

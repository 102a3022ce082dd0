"""Reference solution of a variance-formulas task: writes the formulas with openpyxl."""

import os
from pathlib import Path

import openpyxl

CASE: dict = {}  # filled in by the generator

BOOK = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / CASE.get("workbook", "variance.xlsx")


def main():
    wb = openpyxl.load_workbook(BOOK)
    ws = wb[CASE["sheet"]]
    c = CASE["cols"]
    first, last, total = CASE["first_row"], CASE["first_row"] + CASE["n_rows"] - 1, CASE["total_row"]
    for r in range(first, last + 1):
        left, right = (c["budget"], c["actual"]) if CASE["sign"] == "budget-actual" else (c["actual"], c["budget"])
        ws[f"{c['variance']}{r}"] = f"={left}{r}-{right}{r}"
        ws[f"{c['status']}{r}"] = f'=IF(ABS({c["variance"]}{r})>{CASE["tolerance"]}*{c["budget"]}{r},"CHECK","OK")'
    for key in ("budget", "actual", "variance"):
        col = c[key]
        ws[f"{col}{total}"] = f"=SUM({col}{first}:{col}{last})"
    ws[f"{c['status']}{total}"] = f'=COUNTIF({c["status"]}{first}:{c["status"]}{last},"CHECK")'
    wb.save(BOOK)
    print(f"wrote formulas to {BOOK} rows {first}-{last}, totals in row {total}")


if __name__ == "__main__":
    main()

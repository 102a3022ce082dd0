"""Reference solution of a variance-formulas task: writes the formulas with openpyxl."""

import os
from pathlib import Path

import openpyxl

CASE: dict = {'cols': {'actual': 'D',
                       'budget': 'E',
                       'centre': 'B',
                       'code': 'A',
                       'owner': 'C',
                       'status': 'G',
                       'variance': 'F'},
              'first_row': 4,
              'n_rows': 12,
              'sheet': 'Opex Q4',
              'sign': 'budget-actual',
              'tolerance': 0.1,
              'total_row': 16,
              'workbook': 'variance.xlsx'}

BOOK = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / CASE.get("workbook", "variance.xlsx")


def write_formulas(ws, cols, first, last, total, left, right, tolerance):
    """Variance (the column ``left`` minus ``right``), the status against the tolerance and the Total row's sums;
    xlsx_ladder_solve.py borrows it, so the formulas are written one way at every level."""
    b, v, s = cols["budget"], cols["variance"], cols["status"]
    for r in range(first, last + 1):
        ws[f"{v}{r}"] = f"={left}{r}-{right}{r}"
        ws[f"{s}{r}"] = f'=IF(ABS({v}{r})>{tolerance}*{b}{r},"CHECK","OK")'
    for col in (b, cols["actual"], v):
        ws[f"{col}{total}"] = f"=SUM({col}{first}:{col}{last})"
    ws[f"{s}{total}"] = f'=COUNTIF({s}{first}:{s}{last},"CHECK")'


def main():
    wb = openpyxl.load_workbook(BOOK)
    ws = wb[CASE["sheet"]]
    c = CASE["cols"]
    first, last, total = CASE["first_row"], CASE["first_row"] + CASE["n_rows"] - 1, CASE["total_row"]
    left, right = (c["budget"], c["actual"]) if CASE["sign"] == "budget-actual" else (c["actual"], c["budget"])
    write_formulas(ws, c, first, last, total, left, right, CASE["tolerance"])
    wb.save(BOOK)
    print(f"wrote formulas to {BOOK} rows {first}-{last}, totals in row {total}")


if __name__ == "__main__":
    main()

"""xlsx-variance: read the sheet's layout and rules, then write the formulas with files/xlsx_solve.py."""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.office import FolderRecipe
from autoenv.families.solver import first


class VarianceFormulasRecipe(FolderRecipe):
    name = "xlsx_variance"
    heading = "# Variance formulas in a budget workbook"
    solution = "xlsx_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        first_row, last_row = (int(x) for x in re.search(r"data in rows (\d+)-(\d+)", text).groups())
        listing = first(r"The columns are: (.+?)\.", text)
        cols = {label.split(" ", 1)[1].strip().lower(): label.split(" ", 1)[0] for label in listing.split(", ")}
        definition = first(r"\*\*Variance\*\* \(column \w+\), rows \d+-\d+: (\w+ minus \w+)", text)
        return {
            "workbook": first(r"`/app/([\w.-]+\.xlsx)`", text),
            "sheet": first(r"a sheet \*\*(.+?)\*\*", text),
            "first_row": first_row,
            "n_rows": last_row - first_row + 1,
            "total_row": int(first(r"labelled \*\*Total\*\* in row (\d+)", text)),
            "cols": {
                "budget": cols["budget"],
                "actual": cols["actual"],
                "variance": cols["variance"],
                "status": cols["status"],
            },
            "sign": "budget-actual" if definition.lower() == "budget minus actual" else "actual-budget",
            "tolerance": float(first(r"more than ([\d.]+)% of", text)) / 100,
        }

    def look(self, params: dict[str, Any]) -> str:
        return (
            f'ls -la /app; python3 -c "import openpyxl; ws = '
            f"openpyxl.load_workbook('/app/{params['workbook']}')['{params['sheet']}']; "
            '[print(r) for r in ws.iter_rows(values_only=True)]"'
        )

    def check(self, params: dict[str, Any]) -> str:
        return self.look(params).split("; ", 1)[1]


RECIPE = VarianceFormulasRecipe()

"""xlsx-variance: read the sheet's layout and rules, then write the formulas with files/xlsx_solve.py.

Above level 1 the instruction tells neither: the recipe looks at the workbook (every sheet, the Notes included) and
runs files/xlsx_ladder_solve.py, which finds the layout on the sheet, the rules on the Notes sheet and, where the
Notes say so, the actuals on the Ledger sheet. Its ``difficulty`` is the level's skill key, so each level is a skill
of its own to the learned solver.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.levels import climbing
from autoenv.families.office import FolderRecipe, common
from autoenv.families.solver import first
from autoenv.families.xlsx_variance.generator import LADDER


class VarianceFormulasRecipe(FolderRecipe):
    name = "xlsx_variance"
    ladder = LADDER
    level_markers = climbing("**Notes** sheet", "corners included", "**Ledger** sheet")
    heading = "# Variance formulas in a budget workbook"
    solution = "xlsx_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        if self.level_of(text) >= 2:  # the layout is on the sheet and the rules on its Notes: the program finds them
            return {
                "level": self.level_of(text),
                "workbook": first(r"`/app/([\w.-]+\.xlsx)`", text),
                "sheet": first(r"a sheet \*\*(.+?)\*\*", text),
            }
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

    def program(self, params: dict[str, Any]) -> str:
        if params.get("level", 1) >= 2:
            return common.solution_source(
                self.files / "xlsx_ladder_solve.py", {"workbook": params["workbook"], "sheet": params["sheet"]}
            )
        return super().program(params)

    def look(self, params: dict[str, Any]) -> str:
        if params.get("level", 1) >= 2:  # every sheet: the data, the Notes and any Ledger
            return (
                f"ls -la /app; python3 -c \"import openpyxl; wb = openpyxl.load_workbook('/app/{params['workbook']}'); "
                '[print(ws.title, r) for ws in wb for r in ws.iter_rows(values_only=True)]"'
            )
        return (
            f'ls -la /app; python3 -c "import openpyxl; ws = '
            f"openpyxl.load_workbook('/app/{params['workbook']}')['{params['sheet']}']; "
            '[print(r) for r in ws.iter_rows(values_only=True)]"'
        )

    def check(self, params: dict[str, Any]) -> str:
        return self.look(params).split("; ", 1)[1]


RECIPE = VarianceFormulasRecipe()

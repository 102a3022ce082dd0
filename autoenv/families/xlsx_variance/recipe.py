"""The offline scripted solver's recipe for this family: the parameters come from the instruction, the program is
the family's general procedure (the reference solution's code where it works from the instruction and files alone)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autoenv.families.office import common
from autoenv.families.office.common import flat
from autoenv.families.solver import ScriptRecipe, first

FILES = Path(__file__).with_name("files")


class VarianceFormulasRecipe(ScriptRecipe):
    name = "xlsx_variance"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Variance formulas in a budget workbook"):
            return None
        text = flat(instruction)
        first_row, last_row = (int(x) for x in re.search(r"data in rows (\d+)-(\d+)", text).groups())
        listing = first(r"The columns are: (.+?)\.", text)
        cols = {label.split(" ", 1)[1].strip().lower(): label.split(" ", 1)[0] for label in listing.split(", ")}
        definition = first(r"\*\*Variance\*\* \(column \w+\), rows \d+-\d+: (\w+ minus \w+)", text)
        return {
            "workbook": first(r"`/app/([\w.-]+\.xlsx)`", text),
            "sheet": first(r"a sheet \*\*(.+?)\*\*", text),
            "first_row": first_row, "n_rows": last_row - first_row + 1,
            "total_row": int(first(r"labelled \*\*Total\*\* in row (\d+)", text)),
            "cols": {"budget": cols["budget"], "actual": cols["actual"], "variance": cols["variance"], "status": cols["status"]},
            "sign": "budget-actual" if definition.lower() == "budget minus actual" else "actual-budget",
            "tolerance": float(first(r"more than ([\d.]+)% of", text)) / 100,
        }

    def program(self, params: dict[str, Any]) -> str:
        return common.solution_source(FILES / "xlsx_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return (f"ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/{params['workbook']}')['{params['sheet']}']; "
                "[print(r) for r in ws.iter_rows(values_only=True)]\"")

    def check(self, params: dict[str, Any]) -> str:
        return self.look(params).split("; ", 1)[1]

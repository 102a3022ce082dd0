"""The offline scripted solver's recipe for this family: the parameters come from the instruction, the program is
the family's general procedure (the reference solution's code where it works from the instruction and files alone)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autoenv.families.office import common
from autoenv.families.office.common import flat
from autoenv.families.solver import ScriptRecipe

FILES = Path(__file__).with_name("files")


class CashflowMemoRecipe(ScriptRecipe):
    name = "cashflow_memo"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Cash-flow scenarios and an investment memo"):
            return None
        text = flat(instruction)
        scenarios = re.search(r"row 1 reads `Month`, `(\w+)`, `(\w+)`, `(\w+)`", text).groups()
        rule = re.search(r"cash of both the (\w+) and the (\w+) scenario is at least", text).groups()
        return {"scenarios": list(scenarios), "rule_scenarios": list(rule)}

    def program(self, params: dict[str, Any]) -> str:
        return common.solution_source(FILES / "cashflow_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return ("ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/cashflow.xlsx')['Inputs']; "
                "[print(r) for r in ws.iter_rows(values_only=True)]\"")

    def check(self, params: dict[str, Any]) -> str:
        return ("python3 -c \"import docx; [print(p.text) for p in docx.Document('/app/memo.docx').paragraphs]\"")

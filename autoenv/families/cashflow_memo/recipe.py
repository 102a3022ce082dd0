"""cashflow-memo: read the scenarios and the rule, then build the sheet and memo with files/cashflow_solve.py."""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.office import FolderRecipe


class CashflowMemoRecipe(FolderRecipe):
    name = "cashflow_memo"
    heading = "# Cash-flow scenarios and an investment memo"
    solution = "cashflow_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        scenarios = re.search(r"row 1 reads `Month`, `(\w+)`, `(\w+)`, `(\w+)`", text).groups()
        rule = re.search(r"cash of both the (\w+) and the (\w+) scenario is at least", text).groups()
        return {"scenarios": list(scenarios), "rule_scenarios": list(rule)}

    def look(self, params: dict[str, Any]) -> str:
        return (
            "ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/cashflow.xlsx')['Inputs']; "
            '[print(r) for r in ws.iter_rows(values_only=True)]"'
        )

    def check(self, params: dict[str, Any]) -> str:
        return "python3 -c \"import docx; [print(p.text) for p in docx.Document('/app/memo.docx').paragraphs]\""


RECIPE = CashflowMemoRecipe()

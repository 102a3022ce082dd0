"""cashflow-memo: read the scenarios and the rule, then build the sheet and memo with files/cashflow_solve.py.

Above level 1 the instruction tells neither the model, the layout, the rule nor the memo's form: the recipe reads
the finance team's notes and runs files/cashflow_ladder_solve.py, which finds the inputs by their labels and writes
the sheet and the memo by the notes' conventions; from level 3 that program is the deliverable
(``/app/make_memo.py``), which the tests run on unseen workbooks. Its ``difficulty`` is the level's skill key, so
each level is a skill of its own to the learned solver.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.cashflow_memo.generator import LADDER, RULE_SCENARIOS
from autoenv.families.cashflow_memo.ladder import LEVEL_PHRASES, NOTES, PROGRAM
from autoenv.families.levels import climbing
from autoenv.families.office import FolderRecipe, common


class CashflowMemoRecipe(FolderRecipe):
    name = "cashflow_memo"
    heading = "# Cash-flow scenarios and an investment memo"
    ladder = LADDER
    level_markers = climbing(*LEVEL_PHRASES)
    solution = "cashflow_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        # above level 1 the notes name the rule's scenarios (the finance team's two: Base and Downside)
        found = self.found_above_one(text, PROGRAM)
        if found:
            return found
        scenarios = re.search(r"row 1 reads `Month`, `(\w+)`, `(\w+)`, `(\w+)`", text).groups()
        rule = re.search(r"cash of both the (\w+) and the (\w+) scenario is at least", text).groups()
        return {"scenarios": list(scenarios), "rule_scenarios": list(rule)}

    def program(self, params: dict[str, Any]) -> str:
        if params.get("level", 1) >= 2:
            return common.solution_source(
                self.files / "cashflow_ladder_solve.py", {"level": params["level"], "rule_scenarios": RULE_SCENARIOS}
            )
        return super().program(params)

    def look(self, params: dict[str, Any]) -> str:
        notes = f"; cat /app/{NOTES}" if params.get("level", 1) >= 2 else ""
        return (
            "ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/cashflow.xlsx')['Inputs']; "
            '[print(r) for r in ws.iter_rows(values_only=True)]"' + notes
        )

    def check(self, params: dict[str, Any]) -> str:
        return "python3 -c \"import docx; [print(p.text) for p in docx.Document('/app/memo.docx').paragraphs]\""


RECIPE = CashflowMemoRecipe()

"""The scripted solver's recipes for the office/web families.

Calibration with the offline scripted solver (``terminal:policy=scripted``)
needs a recipe per family, or every task of the family is "too hard" (pass
rate 0). Like the other families' recipes (``autoenv.proposer.templates.solver``)
these read only the instruction and the files in the sandbox, never the
task's tests or solution: the parameters come from the instruction, and the
program they run is the family's general procedure (the same code as the
reference solution where that solution already works from the instruction
and the files alone).
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.proposer.office import common
from autoenv.proposer.templates.solver import ScriptRecipe, first


def _flat(instruction: str) -> str:
    return " ".join(instruction.split())


class IncidentWebappRecipe(ScriptRecipe):
    name = "incident_webapp"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Resolve an incident in the incident tracker"):
            return None
        text = _flat(instruction)
        return {"incident": first(r"Incident \*\*(INC-\d+)\*\* is open", text),
                "port": int(first(r"server\.py --port (\d+)", text))}

    def program(self, params: dict[str, Any]) -> str:
        return common.verifier_source("webapp_client.py", {"incident": params["incident"], "port": params["port"]})

    def look(self, params: dict[str, Any]) -> str:
        return "ls -la /app /app/data; python3 /app/server.py --help | head -n 12"

    def check(self, params: dict[str, Any]) -> str:
        return f"curl -s http://127.0.0.1:{params['port']}/incidents/{params['incident']} | grep -o '<dd id=\"[a-z_]*\">[^<]*</dd>'"


class DocxFormattingRecipe(ScriptRecipe):
    name = "docx_formatting"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Format a project brief"):
            return None
        text = _flat(instruction)
        return {"phrase": first(r'the phrase \*\*"(.+?)"\*\*', text), "name": first(r'full name \*\*"(.+?)"\*\*', text),
                "heading": first(r'section heading \*\*"(.+?)"\*\*', text)}

    def program(self, params: dict[str, Any]) -> str:
        return common.solution_source("docx_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return ("ls -la /app; python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
                "[print(p.style.name, '|', [r.text for r in p.runs]) for p in d.paragraphs]\"")

    def check(self, params: dict[str, Any]) -> str:
        return ("python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
                "[print(p.alignment, [(r.text, r.bold, r.italic) for r in p.runs if r.bold or r.italic]) for p in d.paragraphs]\"")


class VarianceFormulasRecipe(ScriptRecipe):
    name = "xlsx_variance"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Variance formulas in a budget workbook"):
            return None
        text = _flat(instruction)
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
        return common.solution_source("xlsx_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return (f"ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/{params['workbook']}')['{params['sheet']}']; "
                "[print(r) for r in ws.iter_rows(values_only=True)]\"")

    def check(self, params: dict[str, Any]) -> str:
        return self.look(params).split("; ", 1)[1]


class CashflowMemoRecipe(ScriptRecipe):
    name = "cashflow_memo"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Cash-flow scenarios and an investment memo"):
            return None
        text = _flat(instruction)
        scenarios = re.search(r"row 1 reads `Month`, `(\w+)`, `(\w+)`, `(\w+)`", text).groups()
        rule = re.search(r"cash of both the (\w+) and the (\w+) scenario is at least", text).groups()
        return {"scenarios": list(scenarios), "rule_scenarios": list(rule)}

    def program(self, params: dict[str, Any]) -> str:
        return common.solution_source("cashflow_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return ("ls -la /app; python3 -c \"import openpyxl; ws = openpyxl.load_workbook('/app/cashflow.xlsx')['Inputs']; "
                "[print(r) for r in ws.iter_rows(values_only=True)]\"")

    def check(self, params: dict[str, Any]) -> str:
        return ("python3 -c \"import docx; [print(p.text) for p in docx.Document('/app/memo.docx').paragraphs]\"")


RECIPES = {
    "incident-webapp": IncidentWebappRecipe(),
    "docx-formatting": DocxFormattingRecipe(),
    "xlsx-variance": VarianceFormulasRecipe(),
    "cashflow-memo": CashflowMemoRecipe(),
}

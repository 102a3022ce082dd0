"""The offline scripted solver's recipe for this family: the parameters come from the instruction, the program is
the family's general procedure (the reference solution's code where it works from the instruction and files alone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autoenv.families.office import common
from autoenv.families.office.common import flat
from autoenv.families.solver import ScriptRecipe, first

FILES = Path(__file__).with_name("files")


class DocxFormattingRecipe(ScriptRecipe):
    name = "docx_formatting"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Format a project brief"):
            return None
        text = flat(instruction)
        return {"phrase": first(r'the phrase \*\*"(.+?)"\*\*', text), "name": first(r'full name \*\*"(.+?)"\*\*', text),
                "heading": first(r'section heading \*\*"(.+?)"\*\*', text)}

    def program(self, params: dict[str, Any]) -> str:
        return common.solution_source(FILES / "docx_solve.py", params)

    def look(self, params: dict[str, Any]) -> str:
        return ("ls -la /app; python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
                "[print(p.style.name, '|', [r.text for r in p.runs]) for p in d.paragraphs]\"")

    def check(self, params: dict[str, Any]) -> str:
        return ("python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
                "[print(p.alignment, [(r.text, r.bold, r.italic) for r in p.runs if r.bold or r.italic]) for p in d.paragraphs]\"")

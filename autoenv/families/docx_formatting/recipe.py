"""docx-formatting: read the phrase, the name and the heading, then format the brief with files/docx_solve.py.

Above level 1 the instruction names neither the rules nor the targets: the recipe reads the house style guide and
runs files/docx_ladder_solve.py, which takes the targets from the brief's document properties (where the guide
says they are) and applies the level's rules; from level 3 that program is the deliverable
(``/app/format_brief.py``), which the tests run on unseen briefs. Its ``difficulty`` is the level's skill key, so
each level is a skill of its own to the learned solver.
"""

from __future__ import annotations

from typing import Any

from autoenv.families.docx_formatting.generator import LADDER
from autoenv.families.docx_formatting.ladder import GUIDE, LEVEL_PHRASES, PROGRAM
from autoenv.families.levels import climbing
from autoenv.families.office import FolderRecipe, common
from autoenv.families.solver import first


class DocxFormattingRecipe(FolderRecipe):
    name = "docx_formatting"
    heading = "# Format a project brief"
    ladder = LADDER
    level_markers = climbing(*LEVEL_PHRASES)
    solution = "docx_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        # above level 1 the rules are in the guide, the targets in the brief's properties: the program finds them
        found = self.found_above_one(text, PROGRAM)
        if found:
            return found
        return {
            "phrase": first(r'the phrase \*\*"(.+?)"\*\*', text),
            "name": first(r'full name \*\*"(.+?)"\*\*', text),
            "heading": first(r'section heading \*\*"(.+?)"\*\*', text),
        }

    def program(self, params: dict[str, Any]) -> str:
        if params.get("level", 1) >= 2:
            return common.solution_source(self.files / "docx_ladder_solve.py", {"level": params["level"]})
        return super().program(params)

    def look(self, params: dict[str, Any]) -> str:
        guide = f"; cat /app/{GUIDE}" if params.get("level", 1) >= 2 else ""
        props = (
            "; python3 -c \"import docx; c = docx.Document('/app/brief.docx').core_properties; "
            'print(c.keywords, c.subject, c.category, sep=chr(10))"'
            if guide
            else ""
        )
        return (
            "ls -la /app; python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
            "[print(p.style.name, '|', [r.text for r in p.runs]) for p in d.paragraphs]\"" + guide + props
        )

    def check(self, params: dict[str, Any]) -> str:
        return (
            "python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
            "[print(p.alignment, [(r.text, r.bold, r.italic) for r in p.runs if r.bold or r.italic]) for p in "
            'd.paragraphs]"'
        )


RECIPE = DocxFormattingRecipe()

"""docx-formatting: read the phrase, the name and the heading, then format the brief with files/docx_solve.py."""

from __future__ import annotations

from typing import Any

from autoenv.families.office import FolderRecipe
from autoenv.families.solver import first


class DocxFormattingRecipe(FolderRecipe):
    name = "docx_formatting"
    heading = "# Format a project brief"
    solution = "docx_solve.py"

    def read(self, text: str) -> dict[str, Any]:
        return {
            "phrase": first(r'the phrase \*\*"(.+?)"\*\*', text),
            "name": first(r'full name \*\*"(.+?)"\*\*', text),
            "heading": first(r'section heading \*\*"(.+?)"\*\*', text),
        }

    def look(self, params: dict[str, Any]) -> str:
        return (
            "ls -la /app; python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
            "[print(p.style.name, '|', [r.text for r in p.runs]) for p in d.paragraphs]\""
        )

    def check(self, params: dict[str, Any]) -> str:
        return (
            "python3 -c \"import docx; d = docx.Document('/app/brief.docx'); "
            "[print(p.alignment, [(r.text, r.bold, r.italic) for r in p.runs if r.bold or r.italic]) for p in "
            'd.paragraphs]"'
        )


RECIPE = DocxFormattingRecipe()

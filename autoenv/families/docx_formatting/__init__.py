"""Family ``docx-formatting``: format a Word brief (bold a phrase, italicise a name, centre a heading)."""

from __future__ import annotations

from autoenv.families.docx_formatting import generator
from autoenv.families.docx_formatting.recipe import DocxFormattingRecipe
from autoenv.families.office import folder_family

FAMILY = folder_family(
    generator.NAME,
    "format a Word brief: bold a phrase, italicise a name, centre a heading",
    ("docx", "word", "document", "bold", "italic", "formatting", "python-docx", "brief"),
    generator.generate,
    DocxFormattingRecipe(),
)

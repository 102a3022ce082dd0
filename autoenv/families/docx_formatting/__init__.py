"""Family ``docx-formatting``: format a Word brief (bold a phrase, italicise a name, centre a heading)."""

from autoenv.families.docx_formatting import generator, recipe

__all__ = ["generator", "recipe"]

"""Family ``xlsx-variance``: fill a variance column, an OK/CHECK status and totals with formulas."""

from __future__ import annotations

from autoenv.families.office import folder_family
from autoenv.families.xlsx_variance import generator
from autoenv.families.xlsx_variance.recipe import VarianceFormulasRecipe

FAMILY = folder_family(
    generator.NAME,
    "fill variance, status and total formulas in a budget workbook",
    ("xlsx", "excel", "spreadsheet", "formula", "variance", "openpyxl", "budget", "workbook"),
    generator.generate,
    VarianceFormulasRecipe(),
)

"""Family ``xlsx-variance``: fill a variance column, an OK/CHECK status and totals with formulas."""

from autoenv.families.xlsx_variance import generator, recipe

__all__ = ["generator", "recipe"]

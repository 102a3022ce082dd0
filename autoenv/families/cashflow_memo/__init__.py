"""Family ``cashflow-memo``: a scenario cash-flow sheet (formulas) and a memo whose recommendation follows from it."""

from autoenv.families.cashflow_memo import generator, recipe

__all__ = ["generator", "recipe"]

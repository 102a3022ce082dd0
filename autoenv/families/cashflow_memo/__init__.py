"""Family ``cashflow-memo``: a scenario cash-flow sheet (formulas) and a memo whose recommendation follows from it."""

from __future__ import annotations

from autoenv.families.cashflow_memo import generator
from autoenv.families.cashflow_memo.recipe import CashflowMemoRecipe
from autoenv.families.office import folder_family

FAMILY = folder_family(
    generator.NAME,
    "a live cash-flow scenario sheet and a memo whose recommendation follows from it",
    ("cash flow", "cashflow", "scenario", "memo", "recommendation", "finance", "forecast", "covenant"),
    generator.generate,
    CashflowMemoRecipe(),
)

"""Teach the scripted solver the proposer's task families.

:func:`family_recipes` is a recipe plugin of the scripted policy (listed in
``autoenv.agents.policies.recipes.RECIPE_PLUGINS``), so any process running
the scripted solver loads these recipes on first use.
"""

from __future__ import annotations

from autoenv.agents.policies.recipes import Recipe


def family_recipes() -> list[Recipe]:
    from autoenv.proposer.templates import FAMILIES

    recipes: list[Recipe] = []
    for family in FAMILIES.values():
        if family.recipe is not None:
            recipes.append(family.recipe)
    return recipes


def install() -> list[Recipe]:
    """Load the family recipes now (idempotent); the scripted policy also does this on first use."""
    from autoenv.agents.policies.recipes import load_plugins

    return load_plugins()

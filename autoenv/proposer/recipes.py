"""Teach the scripted solver the proposer's task families.

The scripted policy keeps its recipes in a module-level list
(``autoenv.agents.policies.recipes.RECIPES``) and has no plugin mechanism, so
:func:`install` inserts ours at the front of that list, once per process.
They go first because they only match the proposer's own instructions, while
the generic recipes (write a literal, ...) would also match some of ours.
Importing :mod:`autoenv.proposer` installs them, and so does every ``autoenv``
command (the CLI imports the proposer's commands), so ``autoenv calibrate``
on a proposed task uses them too.
"""

from __future__ import annotations

from autoenv.agents.policies.recipes import RECIPES, Recipe


def family_recipes() -> list[Recipe]:
    from autoenv.proposer.templates import FAMILIES

    recipes: list[Recipe] = []
    for family in FAMILIES.values():
        if family.recipe is not None:
            recipes.append(family.recipe)
    return recipes


def install() -> list[Recipe]:
    """Put the family recipes in the scripted policy's registry (idempotent)."""
    ours = family_recipes()
    names = {type(r).__name__ for r in RECIPES}
    added = [r for r in ours if type(r).__name__ not in names]
    RECIPES[0:0] = added
    return added

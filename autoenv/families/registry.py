"""The task families, listed explicitly: adding a family is a folder under ``autoenv/families/`` and a line here.

A seed case picks its family by ``SeedCase.family`` or, failing that, by the
family whose keywords its target skill, failure mode and task summary mention
most (:func:`family_for`). Nothing registers itself at import time; the
scripted solver asks :func:`recipes` for the families' recipes when it first
needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenv.errors import TaskError
from autoenv.families import (
    bugfix,
    cashflow_memo,
    config_repair,
    csv_stat,
    docx_formatting,
    incident_webapp,
    log_parse,
    mlp_rebuild,
    primer_tm,
    shell_script,
    text_classification,
    xlsx_variance,
)
from autoenv.families.base import Family, seed_words
from autoenv.families.office import folder_family

if TYPE_CHECKING:
    from autoenv.families.solver import Recipe
    from autoenv.shared.seed import SeedCase

#: Every family, in the order keyword ties are broken.
FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family.of(bugfix),
        Family.of(csv_stat),
        Family.of(log_parse),
        Family.of(config_repair),
        Family.of(text_classification),
        Family.of(primer_tm),
        Family.of(mlp_rebuild),
        Family.of(shell_script),
        folder_family(incident_webapp),
        folder_family(docx_formatting),
        folder_family(xlsx_variance),
        folder_family(cashflow_memo),
    )
}


class UnknownFamily(TaskError, ValueError):
    """A seed case or option names a family that is not registered."""


def get(name: str) -> Family:
    if name not in FAMILIES:
        raise UnknownFamily(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}")
    return FAMILIES[name]


def family_for(case: SeedCase) -> Family:
    """The family a seed case asks for: its ``family`` field, else the best keyword match (ties: registry order)."""
    if case.family:
        try:
            return get(case.family)
        except UnknownFamily as exc:
            raise UnknownFamily(f"seed case {case.id}: {exc}") from None
    words = seed_words(case)
    return max(FAMILIES.values(), key=lambda f: f.score(words))


def recipes() -> list[Recipe]:
    """The offline solver's recipes of every family that has one (the scripted policy loads these)."""
    return [family.recipe for family in FAMILIES.values() if family.recipe is not None]

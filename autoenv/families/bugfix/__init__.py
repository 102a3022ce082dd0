"""Buggy-function family: a small helper module with one realistic bug to fix."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.bugfix import generator

FAMILY = Family(
    "bugfix",
    "fix a buggy helper function so a report prints the right numbers",
    ("bug", "fix", "median", "debug", "function", "off-by-one", "regression", "unit test"),
    generator.generate,
    None,  # solved by the scripted policy's own fix_function recipe
)

"""Buggy-function family: helper modules with realistic bugs to fix (one named at level 1, several found above)."""

from autoenv.families.bugfix import generator, recipe

__all__ = ["generator", "recipe"]

"""Buggy-function family: a small helper module with one realistic bug to fix."""

from autoenv.families.bugfix import generator

__all__ = ["generator"]

"""Config repair family: a hand-edited INI file the launcher rejects."""

from autoenv.families.config_repair import generator, recipe

__all__ = ["generator", "recipe"]

"""Shell scripting family: a bash tool that tallies files by extension."""

from autoenv.families.shell_script import generator, recipe

__all__ = ["generator", "recipe"]

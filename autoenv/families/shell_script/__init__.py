"""Shell scripting family: a bash tool that tallies files by extension."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.shell_script import generator
from autoenv.families.shell_script.recipe import TallyRecipe

FAMILY = Family(
    "shell-script",
    "a bash tool over a directory tree, tested on fresh trees",
    ("shell", "bash", "script", "find", "files", "directory", "backup", "rotation", "posix"),
    generator.generate,
    TallyRecipe(),
)

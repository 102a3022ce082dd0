"""Config repair family: a hand-edited INI file the launcher rejects."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.config_repair import generator
from autoenv.families.config_repair.recipe import ConfigRepairRecipe

FAMILY = Family(
    "config-repair",
    "repair a hand-edited INI file so the launcher accepts it, keeping intended values",
    ("config", "ini", "configuration", "repair", "settings", "launcher", "yaml", "toml"),
    generator.generate,
    ConfigRepairRecipe(),
)

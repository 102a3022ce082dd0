"""Model-rebuild family: re-implement a small neural network's forward pass from its weights."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.mlp_rebuild import generator
from autoenv.families.mlp_rebuild.recipe import MlpRebuildRecipe

FAMILY = Family(
    "mlp-rebuild",
    "re-implement a small neural network's forward pass from exported weights",
    ("weights", "neural", "mlp", "forward pass", "rebuild", "model", "inference", "torch", "pytorch"),
    generator.generate,
    MlpRebuildRecipe(),
)

"""Model-rebuild family: re-implement a small neural network's forward pass from its weights."""

from autoenv.families.mlp_rebuild import generator, recipe

__all__ = ["generator", "recipe"]

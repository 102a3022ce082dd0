"""Text classification family: train a classifier in pure Python to an accuracy target."""

from autoenv.families.text_classification import generator, recipe

__all__ = ["generator", "recipe"]

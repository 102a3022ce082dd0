"""Text classification family: train a classifier in pure Python to an accuracy target."""

from autoenv.families.text_classification import generator

__all__ = ["generator"]

"""Text classification family: train a classifier in pure Python to an accuracy target."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.text_classification import generator

FAMILY = Family(
    "text-classification",
    "train a standard-library text classifier to an accuracy target within a time budget",
    ("classif", "accuracy", "fasttext", "spam", "sentiment", "model", "train", "nlp", "timeout", "timed out"),
    generator.generate,
    None,  # solved by the scripted policy's own text_classifier recipe
)

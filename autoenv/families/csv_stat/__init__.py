"""CSV statistic family: a grouped statistic over messy rows, checked to a tolerance."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.csv_stat import generator
from autoenv.families.csv_stat.recipe import CsvStatRecipe

FAMILY = Family(
    "csv-stat",
    "grouped statistic over messy CSV rows, to a tolerance",
    ("csv", "statistic", "mean", "weighted", "aggregate", "tolerance", "data cleaning", "spreadsheet"),
    generator.generate,
    CsvStatRecipe(),
    levels=generator.LEVELS,
    default_level=generator.DEFAULT_LEVEL,
)

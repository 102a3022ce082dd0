"""CSV statistic family: a grouped statistic over messy rows, checked to a tolerance."""

from autoenv.families.csv_stat import generator, recipe

__all__ = ["generator", "recipe"]

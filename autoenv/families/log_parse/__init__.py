"""Log parsing family: summarise an application log with malformed lines into JSON."""

from autoenv.families.log_parse import generator, recipe

__all__ = ["generator", "recipe"]

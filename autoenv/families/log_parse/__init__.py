"""Log parsing family: summarise an application log with malformed lines into JSON."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.log_parse import generator
from autoenv.families.log_parse.recipe import LogSummaryRecipe

FAMILY = Family(
    "log-parse",
    "summarise a service log with malformed lines into JSON",
    ("log", "parse", "regex", "malformed", "access log", "grep", "json report"),
    generator.generate,
    LogSummaryRecipe(),
)

"""csv-stat: read the columns, statistic and validity rules from the instruction; files/solver_program.py computes."""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.csv_stat.generator import LADDER
from autoenv.families.csv_stat.ladder import PROGRAM
from autoenv.families.solver import ProgramRecipe, first


class CsvStatRecipe(ProgramRecipe):
    name = "csv_group_statistic"
    markers = ("normalise `", "Values are checked to within")
    naive_variant = True

    def difficulty(self, instruction: str) -> str | None:
        if PROGRAM in instruction:  # level 4: a program for unseen files is a skill of its own
            return LADDER[3].skill()
        return "clean" if "has been cleaned already" in instruction else "messy"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        stat, value = re.search(r"the \*\*(\w+)\*\* of `(\w+)`", instruction).groups()
        status_col, ok = re.search(r"`(\w+)` is exactly `([\w-]+)`", instruction).groups()
        header = first(r"the header `([^`]+)`", instruction)
        return {
            "data": first(r"`(/app/data/[\w.-]+\.csv)`", instruction),
            "group": first(r"normalise `(\w+)`", instruction),
            "value": value,
            "stat": stat,
            "status_col": status_col,
            "ok": ok,
            "header": header,
            "no_negative": "is not negative" in instruction,
            "out": first(r"Write the result to `(/app/[\w./-]+)`", instruction),
            "inputs": [first(r"`(/app/data/[\w.-]+\.csv)`", instruction)],
            "outputs": [first(r"Write the result to `(/app/[\w./-]+)`", instruction)],
            "program_path": PROGRAM if PROGRAM in instruction else None,
        }


RECIPE = CsvStatRecipe()

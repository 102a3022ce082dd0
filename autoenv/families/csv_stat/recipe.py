"""csv-stat: read the columns, statistic and validity rules from the instruction; files/solver_program.py computes.

At level 5 the rules are in the export's data dictionary, not the instruction: the recipe writes the family's
reference program (``files/groupstat5.py``, as an engineer who knows the house's exports), which reads the status
and the period from ``/app/data/DICTIONARY.md`` when it runs; its naive variant is the plain program of levels 1-4.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from autoenv.families.csv_stat import level5
from autoenv.families.csv_stat.generator import LADDER
from autoenv.families.csv_stat.ladder import PROGRAM
from autoenv.families.solver import ProgramRecipe, fill_program, first

#: What only a level-5 instruction says.
DICTIONARY = "/app/data/DICTIONARY.md"


class CsvStatRecipe(ProgramRecipe):
    name = "csv_group_statistic"
    markers = ("normalise `", "Values are checked to within")
    naive_variant = True

    def difficulty(self, instruction: str) -> str | None:
        if DICTIONARY in instruction:  # level 5: a dictionary's rules, unseen corners, a time limit
            return LADDER[4].skill()
        if PROGRAM in instruction:  # level 4: a program for unseen files is a skill of its own
            return LADDER[3].skill()
        return "clean" if "has been cleaned already" in instruction else "messy"

    def match(self, instruction: str) -> dict[str, Any] | None:
        if DICTIONARY in instruction and "Values are checked to within" in instruction:
            try:
                return self.parse_dictionary_task(instruction)
            except (AttributeError, IndexError, KeyError, ValueError):
                return None
        return super().match(instruction)

    def parse_dictionary_task(self, instruction: str) -> dict[str, Any]:
        group, value = re.search(r"^# Per-(\w+) \w+ of (\w+), for any extract", instruction, re.M).groups()
        header = first(r"the header `([^`]+)`", instruction)
        data = first(r"`(/app/data/[\w.-]+\.csv)` is one extract", instruction)
        return {
            "level5": True,
            "group": group,
            "value": value,
            "stat": header.split(",")[2],
            "header": header,
            "data": data,
            "out": "/app/answer.csv",
            "inputs": [data, DICTIONARY],
            "outputs": ["/app/answer.csv"],
            "program_path": level5.PROGRAM,
        }

    def program(self, params: dict[str, Any]) -> str:
        if params.get("level5") and not params.get("naive"):
            return fill_program(level5.reference_text(), params)
        return super().program(params)

    def run_command(self, params: dict[str, Any]) -> str:
        if params.get("level5"):
            return f"python3 {level5.PROGRAM} {shlex.quote(params['data'])} /app/answer.csv"
        return super().run_command(params)

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

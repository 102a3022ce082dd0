"""log-parse: read the log layout and the report's keys from the instruction; files/solver_program.py summarises.

Above level 1 the recipe writes its program where the task asks for one (``/app/logsum.py``, run by the tests on
unseen logs), takes the layout from the services' logging config when the instruction does not give it, and drops
retried writes when the instruction says they count once. Its ``difficulty`` is the level's skill key, so each
level is a skill of its own to the learned solver.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.levels import climbing
from autoenv.families.log_parse.generator import LADDER
from autoenv.families.solver import ProgramRecipe, first

PROGRAM = "/app/logsum.py"


class LogSummaryRecipe(ProgramRecipe):
    name = "log_summary"
    ladder = LADDER
    level_markers = climbing(PROGRAM, "logging configuration declares", "retried write")
    markers = ("is **malformed**", "/app/summary.json")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        told = re.search(r"```\n(.+?)\n```", instruction, re.S)
        key = first(r"\| `(\w+_by_service)` \|", instruction)
        level = first(r"number of counted `(\w+)` lines", instruction)
        window = re.search(r"window from `([^`]+)` \(inclusive\)\s+to `([^`]+)` \(exclusive\)", instruction)
        program = PROGRAM in instruction
        return {
            "layout": told.group(1).strip() if told else None,
            "key": key,
            "level": level,
            "window": list(window.groups()) if window else None,
            "retries": "retried write" in instruction,
            "log": "/app/logs/app.log",
            "out": "/app/summary.json",
            "program_path": PROGRAM if program else None,
            "inputs": ["/app/logs/app.log"],
            "outputs": ["/app/summary.json"],
        }

    def look(self, params: dict[str, Any]) -> str:
        look = super().look(params)
        return look if params["layout"] else look + "; ls /app/conf; cat /app/conf/*"


RECIPE = LogSummaryRecipe()

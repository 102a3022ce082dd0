"""log-parse: read the log layout and the report's keys from the instruction; files/solver_program.py summarises."""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.solver import ProgramRecipe, first


class LogSummaryRecipe(ProgramRecipe):
    name = "log_summary"
    markers = ("is **malformed**", "/app/summary.json")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        layout = first(r"```\n(.+?)\n```", instruction, re.S).strip()
        key = first(r"\| `(\w+_by_service)` \|", instruction)
        level = first(r"number of counted `(\w+)` lines", instruction)
        window = re.search(r"window from `([^`]+)` \(inclusive\)\s+to `([^`]+)` \(exclusive\)", instruction)
        return {
            "layout": layout,
            "key": key,
            "level": level,
            "window": list(window.groups()) if window else None,
            "log": "/app/logs/app.log",
            "out": "/app/summary.json",
            "inputs": ["/app/logs/app.log"],
            "outputs": ["/app/summary.json"],
        }


RECIPE = LogSummaryRecipe()

"""bugfix above level 1: find the buggy helpers from the report (the instruction names none) and fix them all.

Level 1 (one named function) is the scripted policy's generic ``fix_function`` recipe; this one reads only the
instructions of levels 2-4. Its program walks the modules ``report.py`` imports and gives every function of a
known kind its known-correct body (an engineer who has fixed such bugs before), ignoring the last run's log.
"""

from __future__ import annotations

from typing import Any

from autoenv.families.bugfix.generator import LADDER
from autoenv.families.bugfix.reference import REFERENCE_BODIES
from autoenv.families.levels import climbing
from autoenv.families.solver import ProgramRecipe


class BugHuntRecipe(ProgramRecipe):
    name = "bug_hunt"
    markers = ("# The report prints wrong numbers", "Find every buggy helper")
    ladder = LADDER
    #: It reads levels 2-4 only (level 2 needs no phrase beyond ``markers``).
    level_markers = climbing("", "helper modules it imports", "/app/last_run.log")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        return {"app": "/app", "bodies": dict(REFERENCE_BODIES), "inputs": [], "outputs": []}

    def look(self, params: dict[str, Any]) -> str:
        return "ls -la /app; cat /app/report.py; cd /app && python3 report.py; true"

    def check(self, params: dict[str, Any]) -> str:
        return "cd /app && python3 report.py"


RECIPE = BugHuntRecipe()

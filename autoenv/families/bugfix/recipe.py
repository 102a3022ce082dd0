"""bugfix above level 1: find the buggy helpers from the report (the instruction names none) and fix them all.

Level 1 (one named function) is the scripted policy's generic ``fix_function`` recipe; this one reads only the
instructions of levels 2-5. Its program walks the modules ``report.py`` imports (level 5: every module of the
package) and gives every function of a known kind its known-correct body (an engineer who has fixed such bugs
before), ignoring the last run's log.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.bugfix.generator import LADDER
from autoenv.families.bugfix.ledger import reference_bodies
from autoenv.families.bugfix.reference import REFERENCE_BODIES
from autoenv.families.levels import climbing
from autoenv.families.solver import ProgramRecipe, first


class BugHuntRecipe(ProgramRecipe):
    name = "bug_hunt"
    markers = ("# The report prints wrong numbers", "Find every buggy helper")
    ladder = LADDER
    #: It reads levels 2-5 only (level 2 needs no phrase beyond ``markers``; level 5 is a package with a bug report).
    level_markers = (*climbing("", "helper modules it imports", "/app/last_run.log"), ("/app/BUG-REPORT.md",))

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if self.level_of(instruction) == 5:
            package = first(r"`/app/(\w+)` is a small Python package", instruction)
            bodies = {name: re.sub(r"([{}])", r"\1\1", body) for name, body in reference_bodies().items()}
            return {"app": "/app", "package": package, "bodies": bodies, "inputs": [], "outputs": []}
        return {"app": "/app", "bodies": dict(REFERENCE_BODIES), "inputs": [], "outputs": []}

    def look(self, params: dict[str, Any]) -> str:
        if params.get("package"):
            report = f"python3 -m {params['package']}.report data/sample.csv"
            return f"ls -R /app; cat /app/BUG-REPORT.md; cd /app && {report}; true"
        return "ls -la /app; cat /app/report.py; cd /app && python3 report.py; true"

    def check(self, params: dict[str, Any]) -> str:
        if params.get("package"):
            return f"cd /app && python3 -m {params['package']}.report data/sample.csv; true"
        return "cd /app && python3 report.py"


RECIPE = BugHuntRecipe()

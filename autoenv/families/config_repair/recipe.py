"""config-repair: repair each broken line as the launcher's schema reads it, then run the launcher's check.

``files/solver_program.py`` knows the 2.x formats (durations in ms/m/h, counts in thousands, enabled/disabled) and
the structural breakages (byte-order mark, indented settings, comments after values, repeated sections), as an
engineer who has migrated such files before; above level 1 it also reads the notes the task ships. At level 4 it is
written where the task asks for the repair program. Its ``difficulty`` is the level's skill key.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.config_repair.generator import LADDER
from autoenv.families.config_repair.ladder import PROGRAM
from autoenv.families.solver import ProgramRecipe


class ConfigRepairRecipe(ProgramRecipe):
    name = "config_repair"
    ladder = LADDER
    #: Levels 3 and 4 no longer list level 2's breakages: each level's phrases, not a climb.
    level_markers = (("byte-order mark",), ("CHANGES.md",), ("CHANGES.md", PROGRAM))
    markers = ("service.py --check", "evidently")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        ini = re.search(r"`(/app/config/[\w.-]+\.ini)`", instruction).group(1)
        notes = self.level_of(instruction) >= 3
        return {
            "ini": ini,
            "inputs": [ini, "/app/service.py"],
            "outputs": [ini],
            "notes": "/app/config/CHANGES.md" if notes else None,
            "program_path": PROGRAM if PROGRAM in instruction else None,
        }

    def look(self, params: dict[str, Any]) -> str:
        notes = f"cat {params['notes']}; " if params["notes"] else ""
        return f"{notes}cat {params['ini']}; cd /app && python3 service.py --check; sed -n '1,30p' /app/service.py"


RECIPE = ConfigRepairRecipe()

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


def level_of(instruction: str) -> int:
    """The ladder level an instruction reads as."""
    if "CHANGES.md" in instruction:
        return 4 if PROGRAM in instruction else 3
    return 2 if "byte-order mark" in instruction else 1


class ConfigRepairRecipe(ProgramRecipe):
    name = "config_repair"
    markers = ("service.py --check", "evidently")

    def difficulty(self, instruction: str) -> str | None:
        level = level_of(instruction)
        return None if level == 1 else LADDER[level - 1].skill()

    def parse(self, instruction: str) -> dict[str, Any] | None:
        ini = re.search(r"`(/app/config/[\w.-]+\.ini)`", instruction).group(1)
        notes = level_of(instruction) >= 3
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

"""config-repair: repair each broken line as the launcher's schema reads it, then run the launcher's check.

``files/solver_program.py`` knows the 2.x formats (durations in ms/m/h, counts in thousands, enabled/disabled) and
the structural breakages (byte-order mark, indented settings, comments after values, repeated sections), as an
engineer who has migrated such files before; above level 1 it also reads the notes the task ships. At level 4 it is
written where the task asks for the repair program. At level 5 (retire the legacy ``cfgnorm`` binary) it finds the
three numbers the tool was built with by running it on probes (a line longer than its buffer, a long key, more
keys than a section holds), then writes the replacement with them and compares the two on the service's config.
At level 7 (the maintenance windows, :mod:`.windows`) it runs :mod:`autoenv.families.colouring`'s search for a
minute and ships the best plan it found (:class:`~autoenv.families.colouring.SheetSearch`).
Its ``difficulty`` is the level's skill key.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.colouring import SheetSearch
from autoenv.families.config_repair import legacy, windows
from autoenv.families.config_repair.generator import LADDER
from autoenv.families.config_repair.ladder import PROGRAM
from autoenv.families.config_repair.legacy import CFGNORM
from autoenv.families.solver import Episode, ProgramRecipe


class ConfigRepairRecipe(SheetSearch, ProgramRecipe):
    name = "config_repair"
    ladder = LADDER
    #: Levels 3 and 4 no longer list level 2's breakages: each level's phrases, not a climb.
    level_markers = (
        ("byte-order mark",),
        ("CHANGES.md",),
        ("CHANGES.md", PROGRAM),
        (CFGNORM.marker,),
        (CFGNORM.marker, CFGNORM.archive_marker),
        (windows.MARKER,),
    )
    sheet_level = windows.SOLVER  # level 7, the maintenance windows: a search
    markers = ("service.py --check", "evidently")

    def match(self, instruction: str) -> dict[str, Any] | None:
        if CFGNORM.marker in instruction and CFGNORM.tool in instruction:
            ini = re.search(r"`(/app/config/[\w.-]+\.ini)`", instruction)
            if ini is None:
                return None
            archived = CFGNORM.archive_marker in instruction
            return {
                "legacy": True,
                "archived": archived,
                "ini": ini.group(1),
                "program_path": CFGNORM.replacement,
                "inputs": [ini.group(1)],
            }
        return super().match(instruction)

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        if found.get("archived"):
            return CFGNORM.archive_episode(self.name, legacy.CHOICES, {})
        if found.get("legacy"):
            return CFGNORM.episode(self.name, PROBE, found["ini"])
        return super().solve(instruction, found)

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


#: The level-5 probes: the shortest setting line the tool reads as two (its buffer: the cut-off tail has no `=`),
#: the longest key it prints (its name buffer) and how many of a hundred keys one section keeps, printed as
#: ``PROBED {json}``.
PROBE = CFGNORM.probe(
    r"""
def complains(length):
    return any(b": line " in line for line in run(b"[s]\nk=" + b"x" * (length - 2) + b"\n")[0])

low, high = 8, 1 << 14  # complains(high): the buffer is shorter than that
while low < high:
    middle = (low + high) // 2
    low, high = (low, middle) if complains(middle) else (middle + 1, high)
key = run(b"[s]\n" + b"k" * 60 + b" = 1\n")[0][0]
kept = [line for line in run(b"[s]\n" + b"".join(b"k%03d = 1\n" % i for i in range(100)))[0] if line[:2] == b"s."]
print("PROBED " + json.dumps({"line_max": low, "name_len": len(key) - len(b"s.=1") + 1, "max_keys": len(kept)}))
"""
)

"""log-parse: read the log layout and the report's keys from the instruction; files/solver_program.py summarises.

Above level 1 the recipe writes its program where the task asks for one (``/app/logsum.py``, run by the tests on
unseen logs), takes the layout from the services' logging config when the instruction does not give it, and drops
retried writes when the instruction says they count once. At level 5 (retire the legacy ``logsum`` binary) it
finds the three numbers the tool was built with by running it on probes (a line longer than its buffer, a long
name, more services than its table), then writes the replacement with them and compares the two on the sample log.
At level 7 (the batch jobs' slots, :mod:`.lock_slots`) it reads the log's clashes with the instruction's two line
formats and runs :mod:`autoenv.families.colouring`'s search for a minute
(:class:`~autoenv.families.colouring.SheetSearch`).
Its ``difficulty`` is the level's skill key, so each level is a skill of its own to the learned solver.
"""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.colouring import SheetSearch
from autoenv.families.levels import climbing
from autoenv.families.log_parse import legacy, lock_slots
from autoenv.families.log_parse.generator import LADDER
from autoenv.families.log_parse.legacy import LOGSUM
from autoenv.families.solver import Episode, ProgramRecipe, first

PROGRAM = "/app/logsum.py"


class LogSummaryRecipe(SheetSearch, ProgramRecipe):
    name = "log_summary"
    ladder = LADDER
    level_markers = (
        *climbing(PROGRAM, "logging configuration declares", "retried write"),
        (LOGSUM.marker,),
        (LOGSUM.marker, LOGSUM.archive_marker),
        (lock_slots.MARKER,),
    )
    sheet_level = lock_slots.SOLVER  # level 7, the batch jobs' slots: a parse, then a search
    markers = ("is **malformed**", "/app/summary.json")

    def match(self, instruction: str) -> dict[str, Any] | None:
        if LOGSUM.marker in instruction and LOGSUM.tool in instruction:
            archived = LOGSUM.archive_marker in instruction
            return {
                "legacy": True,
                "archived": archived,
                "program_path": PROGRAM,
                "inputs": [legacy.SAMPLE],
                "outputs": [],
            }
        return super().match(instruction)

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        if found.get("archived"):
            return LOGSUM.archive_episode(self.name, legacy.CHOICES, {})
        if found.get("legacy"):
            return LOGSUM.episode(self.name, PROBE, legacy.SAMPLE)
        return super().solve(instruction, found)

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


#: The level-5 probes: the shortest line the tool reads as two (its buffer), the longest name it prints (its name
#: buffer) and how many services it lists out of a hundred (its table), printed as ``PROBED {json}``.
PROBE = LOGSUM.probe(
    r"""
def record(service="probe", message=""):
    return ('[2024-01-01 00:00:00] INFO %s pid=1 5ms "%s"' % (service, message)).encode()

def records(length):
    line = record()[:-1]
    return int(run(line + b"x" * (length - len(line)) + b"\n")[0][1].split()[1])

low, high = 40, 1 << 14  # records(high) is 2: the buffer is shorter than that
while low < high:
    middle = (low + high) // 2
    low, high = (low, middle) if records(middle) > 1 else (middle + 1, high)
name = run(record("n" * 40) + b"\n")[0][8].split()[0]
rows = [r for r in run(b"\n".join(record("s%03d" % i) for i in range(100)) + b"\n")[0][8:] if r.strip()]
print("PROBED " + json.dumps({"line_max": low, "svc_len": len(name) + 1, "max_svc": len(rows)}))
"""
)

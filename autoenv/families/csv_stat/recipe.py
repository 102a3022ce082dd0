"""csv-stat: read the columns, statistic and validity rules from the instruction; files/solver_program.py computes.

At level 5 the rules are in the export's data dictionary, not the instruction: the recipe writes the family's
reference program (``files/groupstat5.py``, as an engineer who knows the house's exports), which reads the status
and the period from ``/app/data/DICTIONARY.md`` when it runs; its naive variant is the plain program of levels 1-4.
At level 6 (retire the legacy ``grpstat`` binary) it finds what the tool was built with by running it on probes (a
header without columns names the one it misses, a line longer than its buffer, a long name, more groups than its
table, each status of the shipped extract), then writes the replacement with them and compares the two on the
shipped extract.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from autoenv.families.csv_stat import legacy, level5
from autoenv.families.csv_stat.generator import LADDER
from autoenv.families.csv_stat.ladder import PROGRAM
from autoenv.families.csv_stat.legacy import GRPSTAT
from autoenv.families.solver import Episode, ProgramRecipe, fill_program, first

#: What only a level-5 instruction says.
DICTIONARY = "/app/data/DICTIONARY.md"


class CsvStatRecipe(ProgramRecipe):
    name = "csv_group_statistic"
    markers = ("normalise `", "Values are checked to within")
    naive_variant = True

    def difficulty(self, instruction: str) -> str | None:
        if GRPSTAT.archive_marker in instruction:  # level 7: the archive of its runs is the specification
            return LADDER[6].skill()
        if GRPSTAT.marker in instruction:  # level 6: the legacy tool is the specification
            return LADDER[5].skill()
        if DICTIONARY in instruction:  # level 5: a dictionary's rules, unseen corners, a time limit
            return LADDER[4].skill()
        if PROGRAM in instruction:  # level 4: a program for unseen files is a skill of its own
            return LADDER[3].skill()
        return "clean" if "has been cleaned already" in instruction else "messy"

    def match(self, instruction: str) -> dict[str, Any] | None:
        if GRPSTAT.marker in instruction and GRPSTAT.tool in instruction:
            data = first(r"\(like `(/app/data/[\w.-]+\.csv)`", instruction)
            group, value = re.search(r"`id,(\w+),(\w+),status`", instruction).groups()
            archived = GRPSTAT.archive_marker in instruction
            return {
                "legacy": True,
                "archived": archived,
                "group": group,
                "value": value,
                "data": data,
                "program_path": GRPSTAT.replacement,
                "inputs": [data],
                "outputs": [],
            }
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

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        if found.get("archived"):
            return GRPSTAT.archive_episode(self.name, legacy.SPACE, {"group": found["group"], "value": found["value"]})
        if found.get("legacy"):
            return GRPSTAT.episode(
                self.name, PROBE.replace("__DATA__", repr(found["data"])), shlex.quote(found["data"])
            )
        return super().solve(instruction, found)

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


#: The level-6 probes, printed as ``PROBED {json}``: the columns (a header without them makes the tool name the one
#: it misses), the final status (which of the shipped extract's statuses counts a row), the shortest line the tool
#: reads as two (its buffer), the longest name it prints (its name buffer) and how many groups it lists out of a
#: hundred (its table).
PROBE = GRPSTAT.probe(
    r"""
columns = []
for _ in range(3):
    columns.append(run((",".join(columns) + "\n").encode())[1].split("'")[1])
group, value, status = columns
head = ("id,%s,%s,%s\n" % (group, value, status)).encode()
with open(__DATA__, "rb") as fh:
    names = fh.readline().decode().strip().split(",")
    statuses = sorted({line.decode().strip().split(",")[names.index(status)] for line in fh if line.strip()})
ok = next(s for s in statuses if run(head + ("1,g,1,%s\n" % s).encode())[0][-2].split()[1] == b"1")

def rows(length):
    line = ("1,g,1,%s," % ok).encode()
    return int(run(head + line + b"x" * (length - len(line)) + b"\n")[0][1].split()[1])

low, high = 20, 1 << 14  # rows(high) is 2: the buffer is shorter than that
while low < high:
    middle = (low + high) // 2
    low, high = (low, middle) if rows(middle) > 1 else (middle + 1, high)
name = run(head + ("1,%s,1,%s\n" % ("n" * 40, ok)).encode())[0][5].split()[0]
listed = run(head + "".join("1,s%03d,1,%s\n" % (i, ok) for i in range(100)).encode())[0][5:-2]
params = {"line_max": low, "name_len": len(name) + 1, "max_groups": len(listed), "group": group, "value": value}
print("PROBED " + json.dumps({**params, "ok": ok}))
"""
)

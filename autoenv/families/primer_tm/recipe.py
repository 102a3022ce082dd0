"""primer-tm: read the formula and limits from the instruction and compute the report with awk (no Python needed).

Above level 1 the task asks for a program, ``/app/tmcalc.py`` (Python is there), which the tests run on unseen
FASTA files: the recipe writes ``files/solver_program.py`` there, with the rules the instruction tells or, when it
points at the lab's protocol instead (levels 3 and 4), the protocol's path for the program to read. Its
``difficulty`` is the level's skill key, so each level is a skill of its own to the learned solver.

At level 5 (split the panel into the kit's pools, :mod:`.pools`) it runs :mod:`autoenv.families.colouring`'s
search, a textbook one (tabu search inside an evolutionary algorithm), for a minute, and ships the best sheet it
found: it passes when the search lands, which on the level's panels is seldom (bench/README), as for a model.
"""

from __future__ import annotations

from typing import Any

from autoenv.families import colouring
from autoenv.families.levels import climbing
from autoenv.families.primer_tm import pools
from autoenv.families.primer_tm.generator import LADDER, awk_solution
from autoenv.families.primer_tm.ladder import CONF, PROGRAM
from autoenv.families.solver import ProgramRecipe, first


class PrimerTmRecipe(ProgramRecipe):
    name = "primer_tm"
    ladder = LADDER
    level_markers = (*climbing(PROGRAM, "/app/protocol/", "no partner"), (pools.MARKER,))
    markers = ("/app/primers.fasta", "/app/tm_report.tsv", "/app/pairs.tsv")
    program_path = "/tmp/autoenv_solve.sh"  # level 1; above it the task names the program's path

    def match(self, instruction: str) -> dict[str, Any] | None:
        if pools.MARKER in instruction and "/app/panel/amplicons.tsv" in instruction:
            return {
                "level": self.level_of(instruction),
                "pools": int(first(r"\*\*(\d+) pool tubes\*\*", instruction)),
                "threshold": float(first(r"dG of \*\*(-?[0-9.]+) kcal/mol or below", instruction)),
                "program_path": colouring.PROGRAM,
                "inputs": ["/app/panel/amplicons.tsv", "/app/panel/dimers.tsv"],
                "outputs": [pools.SHEET],
            }
        return super().match(instruction)

    def parse(self, instruction: str) -> dict[str, Any] | None:
        level = self.level_of(instruction)
        found: dict[str, Any] = {
            "level": level,
            "inputs": ["/app/primers.fasta"],
            "outputs": ["/app/tm_report.tsv", "/app/pairs.tsv"],
        }
        if level >= 3:
            return found | {"protocol": "/app/" + CONF, "program_path": PROGRAM}
        salt = "salt-adjusted" in instruction
        found |= {
            "formula": "salt" if salt else "basic",
            "na": float(first(r"\[Na\+\] = ([0-9.]+)", instruction)) if salt else 0.05,
            "short": int(first(r"shorter than (\d+) bases", instruction)),
        }
        if level == 1:
            return found | {"max_delta": float(first(r"at most ([0-9.]+) °C", instruction))}
        return found | {
            "max_delta": float(first(r"tolerance of a pair is ([0-9.]+) °C", instruction)),
            "program_path": PROGRAM,
        }

    def look(self, params: dict[str, Any]) -> str:
        if "pools" in params:
            return "wc -l /app/panel/*.tsv; head -n 4 /app/panel/*.tsv"
        look = "head -n 8 /app/primers.fasta; command -v python3 awk || true"
        return look + "; ls /app/protocol; cat /app/protocol/*" if "protocol" in params else look

    def program(self, params: dict[str, Any]) -> str:
        if "pools" in params:
            header = ("amplicon", "pool")
            return colouring.search_program(params["pools"], header, "\t", threshold=params["threshold"])
        if params["level"] == 1:  # POSIX sh and awk: the task may have removed Python
            return "#!/bin/sh\nset -e\n" + awk_solution(
                params["formula"], params["na"], params["short"], params["max_delta"]
            )
        rules = ("protocol",) if "protocol" in params else ("formula", "na", "short", "max_delta")
        return super().program({key: params[key] for key in rules})

    def run_command(self, params: dict[str, Any]) -> str:
        if "pools" in params:
            return f"python3 {colouring.PROGRAM} /app/panel {pools.SHEET}"
        if params["level"] == 1:
            return f"sh {self.program_at(params)}"
        return f"python3 {PROGRAM} /app/primers.fasta /app"


RECIPE = PrimerTmRecipe()

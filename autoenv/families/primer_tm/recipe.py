"""primer-tm: read the formula and limits from the instruction and compute the report with awk (no Python needed)."""

from __future__ import annotations

from typing import Any

from autoenv.families.primer_tm.generator import awk_solution
from autoenv.families.solver import ShellRecipe, first


class PrimerTmRecipe(ShellRecipe):
    name = "primer_tm"
    markers = ("Wallace rule", "/app/primers.fasta")
    interpreter = "sh"  # POSIX sh and awk: the task may have removed Python

    def parse(self, instruction: str) -> dict[str, Any] | None:
        return {
            "formula": "salt" if "salt-adjusted" in instruction else "basic",
            "na": float(first(r"\[Na\+\] = ([0-9.]+)", instruction)) if "salt-adjusted" in instruction else 0.05,
            "short": int(first(r"shorter than (\d+) bases", instruction)),
            "max_delta": float(first(r"at most ([0-9.]+) °C", instruction)),
            "inputs": ["/app/primers.fasta"],
            "outputs": ["/app/tm_report.tsv", "/app/pairs.tsv"],
        }

    def look(self, params: dict[str, Any]) -> str:
        return "head -n 8 /app/primers.fasta; command -v python3 awk || true"

    def program(self, params: dict[str, Any]) -> str:
        return "#!/bin/sh\nset -e\n" + awk_solution(
            params["formula"], params["na"], params["short"], params["max_delta"]
        )


RECIPE = PrimerTmRecipe()

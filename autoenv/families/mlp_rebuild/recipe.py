"""mlp-rebuild: read the paths from the instruction; files/solver_program.py runs the exported network forward."""

from __future__ import annotations

import re
from typing import Any

from autoenv.families.solver import ProgramRecipe, first


class MlpRebuildRecipe(ProgramRecipe):
    name = "mlp_forward_pass"
    markers = ("weights.json",)
    program_path = "/app/predict.py"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not re.search(r"forward\s+pass", instruction):
            return None
        return {
            "weights": first(r"`(/app/[\w/.-]*weights\.json)`", instruction),
            "out_in": "shape: units x inputs" in instruction,
            "inputs": ["/app/model/weights.json", "/app/data/inputs.csv"],
            "outputs": ["/app/predictions.csv"],
        }

    def look(self, params: dict[str, Any]) -> str:
        return "head -c 600 /app/model/weights.json; echo; head -n 3 /app/data/inputs.csv"

    def run_command(self, params: dict[str, Any]) -> str:
        return "python3 /app/predict.py /app/data/inputs.csv /app/predictions.csv"


RECIPE = MlpRebuildRecipe()

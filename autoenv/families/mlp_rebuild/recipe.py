"""mlp-rebuild: read the paths from the instruction; files/solver_program.py runs the exported network forward.

Above level 1 the instruction no longer spells the network out: the recipe writes ``files/solver_ladder.py``, which
reads the exporter's format as its EXPORT.md documents it (PyTorch ``weight`` and Keras ``kernel`` layers, the
variance normalisation, the preprocessing pipeline, the ``CURRENT`` export), skips no row (an invalid one is
labelled so) and never overflows. Its ``difficulty`` is the level's skill key, so each level is a skill of its own
to the learned solver.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autoenv.families.levels import climbing
from autoenv.families.mlp_rebuild.generator import LADDER
from autoenv.families.mlp_rebuild.ladder import DOC
from autoenv.families.solver import ProgramRecipe, fill_program, first


class MlpRebuildRecipe(ProgramRecipe):
    name = "mlp_forward_pass"
    ladder = LADDER
    level_markers = climbing(f"/app/{DOC}", "exponent notation", "into the folder `/app/model/`")
    markers = ("/app/predict.py", "/app/model/")
    program_path = "/app/predict.py"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not re.search(r"forward\s+pass", instruction):
            return None
        level = self.level_of(instruction)
        found: dict[str, Any] = {
            "level": level,
            "inputs": ["/app/data/inputs.csv"],
            "outputs": ["/app/predictions.csv"],
        }
        if level == 1:
            weights = first(r"`(/app/[\w/.-]*weights\.json)`", instruction)
            return found | {"weights": weights, "out_in": "shape: units x inputs" in instruction}
        weights = None if level >= 4 else first(r"exported\s+to\s+`(/app/[\w/.-]+\.json)`", instruction)
        return found | {"weights": weights, "model_dir": "/app/model"}

    def look(self, params: dict[str, Any]) -> str:
        if params["level"] == 1:
            return "head -c 600 /app/model/weights.json; echo; head -n 3 /app/data/inputs.csv"
        return f"ls -la /app/model; cat /app/{DOC}; cat /app/model/CURRENT 2>/dev/null; head -n 3 /app/data/inputs.csv"

    def program(self, params: dict[str, Any]) -> str:
        if params["level"] == 1:
            return super().program({"weights": params["weights"], "out_in": params["out_in"]})
        source = (Path(__file__).with_name("files") / "solver_ladder.py").read_text()
        return fill_program(source, {"weights": params["weights"], "model_dir": params["model_dir"]})

    def run_command(self, params: dict[str, Any]) -> str:
        return "python3 /app/predict.py /app/data/inputs.csv /app/predictions.csv"


RECIPE = MlpRebuildRecipe()

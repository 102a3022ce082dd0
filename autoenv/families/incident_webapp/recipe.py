"""The offline scripted solver's recipe for this family: the parameters come from the instruction, the program is
the family's general procedure (the reference solution's code where it works from the instruction and files alone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autoenv.families.office import common
from autoenv.families.office.common import flat
from autoenv.families.solver import ScriptRecipe, first

FILES = Path(__file__).with_name("files")


class IncidentWebappRecipe(ScriptRecipe):
    name = "incident_webapp"

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if not instruction.startswith("# Resolve an incident in the incident tracker"):
            return None
        text = flat(instruction)
        return {"incident": first(r"Incident \*\*(INC-\d+)\*\* is open", text),
                "port": int(first(r"server\.py --port (\d+)", text))}

    def program(self, params: dict[str, Any]) -> str:
        return common.verifier_source(FILES / "webapp_client.py", {"incident": params["incident"], "port": params["port"]})

    def look(self, params: dict[str, Any]) -> str:
        return "ls -la /app /app/data; python3 /app/server.py --help | head -n 12"

    def check(self, params: dict[str, Any]) -> str:
        return f"curl -s http://127.0.0.1:{params['port']}/incidents/{params['incident']} | grep -o '<dd id=\"[a-z_]*\">[^<]*</dd>'"

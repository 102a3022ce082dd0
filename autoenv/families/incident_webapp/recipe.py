"""incident-webapp: read the incident and the port, then resolve it through the app like the client in files/."""

from __future__ import annotations

from typing import Any

from autoenv.families.office import FolderRecipe, common
from autoenv.families.solver import first


class IncidentWebappRecipe(FolderRecipe):
    name = "incident_webapp"
    heading = "# Resolve an incident in the incident tracker"

    def read(self, text: str) -> dict[str, Any]:
        return {
            "incident": first(r"Incident \*\*(INC-\d+)\*\* is open", text),
            "port": int(first(r"server\.py --port (\d+)", text)),
        }

    def program(self, params: dict[str, Any]) -> str:
        return common.verifier_source(
            self.files / "webapp_client.py", {"incident": params["incident"], "port": params["port"]}
        )

    def look(self, params: dict[str, Any]) -> str:
        return "ls -la /app /app/data; python3 /app/server.py --help | head -n 12"

    def check(self, params: dict[str, Any]) -> str:
        return (
            f"curl -s http://127.0.0.1:{params['port']}/incidents/{params['incident']} | grep -o '<dd "
            f'id="[a-z_]*">[^<]*</dd>\''
        )


RECIPE = IncidentWebappRecipe()

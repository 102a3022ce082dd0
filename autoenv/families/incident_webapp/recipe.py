"""incident-webapp: read the incident and the port, then resolve it through the app like the client in files/.

Above level 1 the rules are the team's process (``/app/docs``): the recipe reads those documents and runs the same
client, which follows them (a superseded runbook gives way to its replacement, an absent on-call to the rota's
deputy) with Python's ``urllib`` alone, so an image without curl changes nothing for it. Its ``difficulty`` is the
level's skill key, so each level is a skill of its own to the learned solver.
"""

from __future__ import annotations

from typing import Any

from autoenv.families.incident_webapp.generator import LADDER
from autoenv.families.levels import climbing
from autoenv.families.office import FolderRecipe, common
from autoenv.families.solver import first


class IncidentWebappRecipe(FolderRecipe):
    name = "incident_webapp"
    ladder = LADDER
    level_markers = climbing("/app/docs/process.md", "documents it refers to", "no `curl`")
    heading = "# Resolve an incident in the incident tracker"

    def read(self, text: str) -> dict[str, Any]:
        return {
            "incident": first(r"Incident \*\*(INC-\d+)\*\* is open", text),
            "port": int(first(r"server\.py --port (\d+)", text)),
            "level": self.level_of(text),
        }

    def program(self, params: dict[str, Any]) -> str:
        return common.verifier_source(
            self.files / "webapp_client.py", {"incident": params["incident"], "port": params["port"]}
        )

    def look(self, params: dict[str, Any]) -> str:
        docs = "; cat /app/docs/*.md" if params["level"] >= 2 else ""
        return "ls -la /app /app/data; python3 /app/server.py --help | head -n 12" + docs

    def check(self, params: dict[str, Any]) -> str:
        if params["level"] >= 4:  # no curl in the image
            return f"python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{params['port']}/incidents/{params['incident']}').read().decode()[-1500:])\""
        return (
            f"curl -s http://127.0.0.1:{params['port']}/incidents/{params['incident']} | grep -o '<dd "
            f'id="[a-z_]*">[^<]*</dd>\''
        )


RECIPE = IncidentWebappRecipe()

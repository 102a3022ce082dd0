"""config-repair: repair each broken value as the launcher's schema reads it, then run the launcher's check."""

from __future__ import annotations

from typing import Any

from autoenv.families.solver import ProgramRecipe


class ConfigRepairRecipe(ProgramRecipe):
    name = "config_repair"
    markers = ("service.py --check", "evidently")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        import re

        ini = re.search(r"`(/app/config/[\w.-]+\.ini)`", instruction).group(1)
        return {"ini": ini, "inputs": [ini, "/app/service.py"], "outputs": [ini]}

    def look(self, params: dict[str, Any]) -> str:
        return f"cat {params['ini']}; cd /app && python3 service.py --check; sed -n '1,30p' /app/service.py"


RECIPE = ConfigRepairRecipe()

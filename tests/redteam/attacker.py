"""An attacking Harbor agent, loaded by import path like any third-party agent.

It runs one shell script through ``environment.exec`` as root, the way a
policy's commands arrive, and keeps what the script printed in its log folder.
"""

from __future__ import annotations

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

IMPORT_PATH = "tests.redteam.attacker:ScriptAgent"


class ScriptAgent(BaseAgent):
    def __init__(self, *args, script: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.script = script

    @staticmethod
    def name() -> str:
        return "redteam-script"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        pass

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        result = await environment.exec(self.script, timeout_sec=180, user="root")
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "attack.txt").write_text(
            f"exit={result.return_code}\n{result.stdout}\n--- stderr\n{result.stderr}"
        )

"""What Harbor asks of every agent about itself, said once for autoenv's command-running agents."""

from __future__ import annotations

from typing import ClassVar


class NamedAgent:
    """Mixin before Harbor's ``BaseAgent``: the agent's name (``AGENT_NAME``) and version 1.

    Harbor records both with every trial; autoenv's adversary, leak scan and partial-solution agents run
    commands they compute (no model), so the version only changes with their code.
    """

    AGENT_NAME: ClassVar[str]

    @classmethod
    def name(cls) -> str:
        return cls.AGENT_NAME

    def version(self) -> str:
        return "1"

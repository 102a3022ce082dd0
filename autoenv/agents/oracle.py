"""Harbor's oracle, loadable by import path: the base of agents that run the reference solution.

Harbor hands the task directory only to its built-in oracle; an agent loaded
by import path gets it from the ``task_dir`` kwarg or, failing that, from the
trial's config.json (written before the agent runs, next to its logs dir).
Subclasses decide whether and how the solution runs (:mod:`autoenv.agents.coin`
flips a coin, :mod:`autoenv.agents.partial` damages what it produced).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import override

from harbor.agents.base import BaseAgent
from harbor.agents.oracle import OracleAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.task.task import Task
from harbor.models.trial.paths import TrialPaths


class TaskOracleAgent(OracleAgent):
    """Harbor's OracleAgent whose task is found at run time rather than passed by the trial."""

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        *,
        task_dir: Path | str | None = None,
        agent_timeout_sec: float | None = None,
        **kwargs,
    ):
        # OracleAgent.__init__ needs the task up front; ours may only be known at run time
        BaseAgent.__init__(self, logs_dir=logs_dir, model_name=model_name, **kwargs)
        self._task_dir = Path(task_dir) if task_dir else None
        self._agent_timeout_sec = float(agent_timeout_sec) if agent_timeout_sec else None
        self._trial_paths = TrialPaths(trial_dir=Path(logs_dir).parent)
        self._step_index = 0

    def _resolve_task_dir(self) -> Path:
        if self._task_dir is not None:
            return self._task_dir
        config = self._trial_paths.trial_dir / "config.json"
        try:
            return Path(json.loads(config.read_text())["task"]["path"])
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"{config}: cannot find the task directory (pass task_dir=...): {exc}") from exc

    async def run_solution(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        """Run the task's reference solution exactly as Harbor's oracle does."""
        self._task = Task(self._resolve_task_dir())
        if self._agent_timeout_sec is None and self._task.config.agent.timeout_sec:
            self._agent_timeout_sec = self._task.config.agent.timeout_sec
        await OracleAgent.run(self, instruction, environment, context)

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        await self.run_solution(instruction, environment, context)

"""An agent with a known success rate, for testing calibration itself.

Calibration estimates a solver's pass rate from K rollouts and reports a
Wilson interval. To check that machinery end to end we need a solver whose
true pass rate is known: this one runs the task's reference solution (exactly
as Harbor's oracle does) with probability ``p`` and does nothing otherwise.
The coin is seeded, so a given ``seed`` always gives the same sequence of
outcomes and tests stay deterministic.

Harbor hands the task directory only to its built-in oracle; an agent loaded
by import path gets it from the ``task_dir`` kwarg or, failing that, from the
trial's config.json (written before the agent runs, next to its logs dir).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import override

from harbor.agents.base import BaseAgent
from harbor.agents.oracle import OracleAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.task.task import Task
from harbor.models.trial.paths import TrialPaths


def coin_flip(p: float, seed: int | str | None) -> bool:
    """The agent's decision for one rollout: True (solve) with probability ``p``."""
    rng = random.Random(f"coin:{seed}") if seed is not None else random.Random()
    return rng.random() < p


class CoinOracleAgent(OracleAgent):
    """Runs the reference solution with probability ``p`` (seeded), otherwise nothing."""

    def __init__(self, logs_dir: Path, model_name: str | None = None, *, p: float | str = 0.5, seed: int | str | None = None,
                 task_dir: Path | str | None = None, agent_timeout_sec: float | None = None, **kwargs):
        # OracleAgent.__init__ needs the task up front; ours may only be known at run time
        BaseAgent.__init__(self, logs_dir=logs_dir, model_name=model_name, **kwargs)
        self.p = float(p)
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"coin agent: p must be within [0, 1], got {p}")
        self.seed = seed
        self._task_dir = Path(task_dir) if task_dir else None
        self._agent_timeout_sec = agent_timeout_sec
        self._trial_paths = TrialPaths(trial_dir=Path(logs_dir).parent)
        self._step_index = 0

    @staticmethod
    @override
    def name() -> str:
        return "coin-oracle"

    def _resolve_task_dir(self) -> Path:
        if self._task_dir is not None:
            return self._task_dir
        config = self._trial_paths.trial_dir / "config.json"
        try:
            return Path(json.loads(config.read_text())["task"]["path"])
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"{config}: cannot find the task directory (pass task_dir=...): {exc}") from exc

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        solve = coin_flip(self.p, self.seed)
        context.metadata = {"n_turns": 1, "coin": solve, "p": self.p, "seed": self.seed}
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "coin.json").write_text(json.dumps(context.metadata))
        if not solve:
            return
        self._task = Task(self._resolve_task_dir())
        await super().run(instruction, environment, context)

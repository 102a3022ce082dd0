"""An agent with a known success rate, for testing calibration itself.

Calibration estimates a solver's pass rate from K rollouts and reports a
Wilson interval. To check that machinery end to end we need a solver whose
true pass rate is known: this one runs the task's reference solution (exactly
as Harbor's oracle does) with probability ``p`` and does nothing otherwise.
The coin is seeded, so a given ``seed`` always gives the same sequence of
outcomes and tests stay deterministic.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import override

from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from autoenv.agents.oracle import TaskOracleAgent


def coin_flip(p: float, seed: int | str | None) -> bool:
    """The agent's decision for one rollout: True (solve) with probability ``p``."""
    rng = random.Random(f"coin:{seed}") if seed is not None else random.Random()
    return rng.random() < p


class CoinOracleAgent(TaskOracleAgent):
    """Runs the reference solution with probability ``p`` (seeded), otherwise nothing."""

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        *,
        p: float | str = 0.5,
        seed: int | str | None = None,
        **kwargs,
    ):
        super().__init__(logs_dir, model_name, **kwargs)
        self.p = float(p)
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"coin agent: p must be within [0, 1], got {p}")
        self.seed = seed

    @staticmethod
    @override
    def name() -> str:
        return "coin-oracle"

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        solve = coin_flip(self.p, self.seed)
        context.metadata = {"n_turns": 1, "coin": solve, "p": self.p, "seed": self.seed}
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "coin.json").write_text(json.dumps(context.metadata))
        if solve:
            await self.run_solution(instruction, environment, context)

"""The offline policy: a heuristic solver with a dial for how often it succeeds.

It exists so the whole pipeline (trials, validation, calibration, rollouts,
export) can run without a model, and so calibration code can be tested
against a solver whose pass rate is known in advance. It explores the
sandbox, recognises task families from the instruction (see
:mod:`autoenv.agents.policies.recipes`), and carries the recipe out with real
commands, reacting to what they print.

``success_rate`` p: with probability 1 - p the episode deliberately gives up
after looking around. The draw comes from a RNG seeded by ``seed`` and a
digest of the instruction, so a given (seed, task) always plays the same way,
and the pass rate over seeds is p times the recipe's own success rate.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from autoenv.agents.policies.base import Conversation, PolicyConfigError
from autoenv.agents.policies.plans import PlanPolicy
from autoenv.agents.policies.recipes import Episode, Plan, find_tests_and_run, match_recipe
from autoenv.shared.actions import FinishAction, RunAction

SCRIPTED_VERSION = "scripted-1"


class ScriptedPolicy(PlanPolicy):
    name = "scripted"

    def __init__(self, *, seed: int | None = None, success_rate: float = 1.0, policy_version: str | None = None):
        if not 0.0 <= success_rate <= 1.0:
            raise PolicyConfigError(f"success_rate must be within [0, 1], got {success_rate}")
        super().__init__()
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.seed_was_given = seed is not None
        self.success_rate = success_rate
        self.policy_version = policy_version or SCRIPTED_VERSION
        self._decision: dict[str, Any] = {}

    def decide(self, instruction: str) -> dict[str, Any]:
        """Whether this (seed, task) pair is one the policy is allowed to solve."""
        task_key = hashlib.sha256(instruction.strip().encode()).hexdigest()[:16]
        draw = random.Random(f"{self.seed}:{task_key}").random()
        return {
            "seed": self.seed,
            "task_key": task_key,
            "draw": round(draw, 6),
            "attempt": draw < self.success_rate,
            "success_rate": self.success_rate,
        }

    def start(self, conversation: Conversation) -> Episode:
        self._decision = self.decide(conversation.instruction)
        return self._play(conversation.instruction)

    def reply_info(self, plan: Plan, turn: int) -> dict[str, Any]:
        return {**plan.info, "decision": self._decision} if turn == 1 else {**plan.info}

    def _found(self, found: dict[str, Any]) -> dict[str, Any]:
        """What the recipe is told it found (a subclass may vary how it is carried out)."""
        return found

    def _play(self, instruction: str) -> Episode:
        yield Plan([RunAction(command="pwd && ls -la")], "Look at the working directory first.")
        matched = match_recipe(instruction)
        recipe_name = matched[0].name if matched else None
        if not self._decision["attempt"]:
            yield Plan(
                [FinishAction(message="Stopping without a solution.")],
                "I will not attempt this task.",
                {"intent": "calibrated_failure", "recipe": recipe_name},
            )
            return
        if matched is None:
            yield from find_tests_and_run()
            yield Plan(
                [FinishAction(message="I do not know how to solve this task.")],
                "No recipe matches this task.",
                {"intent": "no_recipe"},
            )
            return
        recipe, found = matched
        first = True
        episode = recipe.solve(instruction, self._found(found))
        results = None
        while True:
            try:
                plan = episode.send(results) if not first else next(episode)
            except StopIteration:
                return
            if first:
                plan.info = {"intent": "solve", "recipe": recipe.name, **plan.info}
                first = False
            results = yield plan

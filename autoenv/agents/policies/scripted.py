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

from autoenv.agents.policies.actions import TOOL_DEFINITIONS, FinishAction, RunAction, action_to_tool_call
from autoenv.agents.policies.base import Call, Conversation, PolicyConfigError, PolicyReply
from autoenv.agents.policies.prompts import system_prompt
from autoenv.agents.policies.recipes import Episode, Plan, find_tests_and_run, match_recipe

SCRIPTED_VERSION = "scripted-1"


class ScriptedPolicy:
    name = "scripted"

    def __init__(self, *, seed: int | None = None, success_rate: float = 1.0, policy_version: str | None = None):
        if not 0.0 <= success_rate <= 1.0:
            raise PolicyConfigError(f"success_rate must be within [0, 1], got {success_rate}")
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.seed_was_given = seed is not None
        self.success_rate = success_rate
        self.policy_version = policy_version or SCRIPTED_VERSION
        self._episode: Episode | None = None
        self._decision: dict[str, Any] = {}
        self._done = False

    @property
    def tool_definitions(self) -> list[dict[str, Any]] | None:
        return TOOL_DEFINITIONS

    def system_prompt(self) -> str:
        return system_prompt(tools=True)

    async def aclose(self) -> None:
        if self._episode is not None:
            self._episode.close()

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

    async def act(self, conversation: Conversation) -> PolicyReply:
        turn_index = len(conversation.turns) + 1
        plan: Plan
        if self._done:
            plan = Plan([FinishAction(message="Nothing left to do.")], "Done.")
        elif self._episode is None:
            self._decision = self.decide(conversation.instruction)
            self._episode = self._play(conversation.instruction)
            plan = next(self._episode)
        else:
            last = conversation.turns[-1].results if conversation.turns else []
            try:
                plan = self._episode.send(last)
            except StopIteration:
                plan = Plan([FinishAction(message="Nothing left to try.")], "Done.")
        if any(isinstance(a, FinishAction) for a in plan.actions):
            self._done = True
        calls = []
        for i, action in enumerate(plan.actions):
            name, args = action_to_tool_call(action)
            calls.append(Call(id=f"call_{turn_index}_{i + 1}", name=name, arguments=args, action=action))
        info = {**plan.info}
        if turn_index == 1:
            info["decision"] = self._decision
        return PolicyReply(text=plan.note, calls=calls, policy_version=self.policy_version, llm_calls=0, info=info)

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

"""A policy without a model: it plays a generator of :class:`~autoenv.agents.policies.recipes.Plan` objects.

Each plan's actions become tool calls the terminal agent executes in the sandbox, and the results go back
into the generator, so later plans depend on what the commands really printed. The offline solver
(:mod:`autoenv.agents.policies.scripted`) and the offline agentic proposer (:mod:`autoenv.proposer.agentic`)
are such policies; they differ only in the episode they play.
"""

from __future__ import annotations

from typing import Any

from autoenv.agents.policies.base import Call, Conversation, PolicyReply
from autoenv.agents.policies.prompts import system_prompt
from autoenv.agents.policies.recipes import Episode, Plan
from autoenv.shared.actions import TOOL_DEFINITIONS, FinishAction, action_to_tool_call


class PlanPolicy:
    name = "scripted"
    policy_version: str = "scripted-1"
    #: What the policy says when asked to act after it finished, and when its episode ran out of plans.
    finished_message = "Nothing left to do."
    exhausted_message = "Nothing left to try."

    def __init__(self) -> None:
        self._episode: Episode | None = None
        self._done = False

    @property
    def tool_definitions(self) -> list[dict[str, Any]] | None:
        return TOOL_DEFINITIONS

    def system_prompt(self) -> str:
        return system_prompt(tools=True)

    async def aclose(self) -> None:
        if self._episode is not None:
            self._episode.close()

    def start(self, conversation: Conversation) -> Episode:
        """The episode to play for this conversation (called once, at the first turn)."""
        raise NotImplementedError

    def reply_info(self, plan: Plan, turn: int) -> dict[str, Any]:
        """What the reply records besides the calls (the plan's own info by default)."""
        return plan.info

    async def act(self, conversation: Conversation) -> PolicyReply:
        turn = len(conversation.turns) + 1
        if self._done:
            plan = Plan([FinishAction(message=self.finished_message)], "Done.")
        elif self._episode is None:
            self._episode = self.start(conversation)
            plan = next(self._episode)
        else:
            try:
                plan = self._episode.send(conversation.turns[-1].results if conversation.turns else [])
            except StopIteration:
                plan = Plan([FinishAction(message=self.exhausted_message)], "Done.")
        if any(isinstance(a, FinishAction) for a in plan.actions):
            self._done = True
        calls = []
        for i, action in enumerate(plan.actions):
            name, args = action_to_tool_call(action)
            calls.append(Call(id=f"call_{turn}_{i + 1}", name=name, arguments=args, action=action))
        info = self.reply_info(plan, turn)
        return PolicyReply(text=plan.note, calls=calls, policy_version=self.policy_version, llm_calls=0, info=info)

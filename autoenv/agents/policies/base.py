"""What every policy consumes and returns, so the agent loop does not care who decides.

A policy sees the whole :class:`Conversation` (instruction, its earlier replies
and what they produced) and answers with a :class:`PolicyReply`. The reply
carries what RL training needs beyond the actions: the exact token ids and
log-probs the endpoint reported, the policy version that produced it, and the
retries it took, so the trajectory can be trained on without re-tokenising.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from autoenv.errors import EndpointError
from autoenv.shared.actions import Action, ActionResult

# -- errors -----------------------------------------------------------------------------
# A bad *reply* (no valid action) is the model's fault and is fed back to it; the
# errors below mean no reply could be obtained at all, which is an
# infrastructure failure and must not be scored as a failed attempt.


class PolicyError(EndpointError):
    """No reply could be obtained from the policy."""

    stop_reason: ClassVar[str] = "policy_error"


class PolicyConfigError(PolicyError):
    """The policy is misconfigured (unknown name, missing model or key)."""


class PolicyAuthError(PolicyError):
    """The endpoint rejected the credentials (HTTP 401/403)."""


class PolicyConnectionError(PolicyError):
    """Nothing answered at the base URL (refused, DNS, TLS, timeouts after retries)."""


class PolicyEndpointError(PolicyError):
    """The endpoint answered, but not with a completion (404, 4xx, 5xx after retries)."""


class ContextLengthExceededError(PolicyError):
    """The conversation no longer fits the model's context; the episode ends normally."""

    stop_reason: ClassVar[str] = "context_length"


# -- replies ----------------------------------------------------------------------------


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class RetryRecord(BaseModel):
    """One failed request that was retried (429, 5xx, timeouts)."""

    attempt: int
    status: int | None = None
    error: str
    wait_sec: float


class Call(BaseModel):
    """One action request in a reply, valid or not, as the model phrased it."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    action: Action | None = None
    error: str | None = None


class PolicyReply(BaseModel):
    text: str = ""
    reasoning: str | None = None
    calls: list[Call] = Field(default_factory=list)
    #: Why the reply cannot be executed; None when every call is valid.
    invalid: str | None = None
    #: The assistant message exactly as it must be replayed to the endpoint next turn.
    message: dict[str, Any] | None = None
    model: str | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    policy_version: str | None = None
    #: 0 for deterministic policies (ATIF: no metrics then), 1 per endpoint call.
    llm_calls: int = 0
    latency_sec: float | None = None
    retries: list[RetryRecord] = Field(default_factory=list)
    info: dict[str, Any] = Field(default_factory=dict)

    @property
    def actions(self) -> list[Any]:
        return [c.action for c in self.calls if c.action is not None]


class Turn(BaseModel):
    reply: PolicyReply
    results: list[ActionResult] = Field(default_factory=list)
    #: Message to the policy when the reply could not be executed at all.
    feedback: str | None = None


class Conversation(BaseModel):
    instruction: str
    workdir: str | None = None
    #: The sandbox's environment note (OS, shell, tools; :mod:`autoenv.agents.environment_note`), if probed.
    environment: str | None = None
    turns: list[Turn] = Field(default_factory=list)


@runtime_checkable
class Policy(Protocol):
    """Anything that turns a conversation into the next reply."""

    name: str

    @property
    def tool_definitions(self) -> list[dict[str, Any]] | None:
        """OpenAI function schemas offered to the model, or None in text mode."""
        ...

    def system_prompt(self) -> str: ...

    async def act(self, conversation: Conversation) -> PolicyReply: ...

    async def aclose(self) -> None: ...

"""Policies that drive the terminal agent, by short name.

``scripted`` is offline and deterministic under a seed; ``openai`` is any
OpenAI-compatible chat-completions endpoint (vLLM, SGLang, litellm, hosted).
"""

from __future__ import annotations

from typing import Any

from autoenv.agents.policies.base import (
    ContextLengthExceededError,
    Conversation,
    Policy,
    PolicyAuthError,
    PolicyConfigError,
    PolicyConnectionError,
    PolicyEndpointError,
    PolicyError,
    PolicyReply,
)
from autoenv.vocab import SolverPolicy

POLICIES = tuple(SolverPolicy)


def make_policy(name: str, **kwargs: Any) -> Policy:
    """Build a policy; kwargs a policy does not take are an error, not silently dropped."""
    if name == SolverPolicy.SCRIPTED:
        from autoenv.agents.policies.scripted import ScriptedPolicy

        allowed = {"seed", "success_rate", "policy_version"}
        factory: Any = ScriptedPolicy
    elif name == SolverPolicy.LEARNED:
        from autoenv.agents.policies.learned import LearnedPolicy

        allowed = {"seed", "table", "policy_version"}
        factory = LearnedPolicy
    elif name == SolverPolicy.OPENAI:
        from autoenv.agents.policies.openai_policy import OpenAIPolicy

        allowed = {
            "model",
            "base_url",
            "api_key",
            "temperature",
            "max_tokens",
            "tool_mode",
            "rollout_details",
            "policy_version",
            "seed",
            "max_retries",
            "max_connect_retries",
            "retry_base_sec",
            "retry_max_sec",
            "request_timeout_sec",
            "extra_body",
        }
        factory = OpenAIPolicy
    else:
        raise PolicyConfigError(f"unknown policy {name!r}; choose one of: {', '.join(POLICIES)}")
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise PolicyConfigError(f"the {name} policy does not take: {', '.join(unknown)}")
    return factory(**kwargs)


__all__ = [
    "POLICIES",
    "ContextLengthExceededError",
    "Conversation",
    "Policy",
    "PolicyAuthError",
    "PolicyConfigError",
    "PolicyConnectionError",
    "PolicyEndpointError",
    "PolicyError",
    "PolicyReply",
    "make_policy",
]

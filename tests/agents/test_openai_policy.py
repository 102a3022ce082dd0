"""The openai policy with the real ``openai`` client against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import time

import pytest
from chat_server import MODEL, completion, error

from autoenv.agents.policies import make_policy
from autoenv.agents.policies.base import (
    ActionResult,
    ContextLengthExceededError,
    Conversation,
    PolicyAuthError,
    PolicyConfigError,
    PolicyConnectionError,
    PolicyEndpointError,
    Turn,
)
from autoenv.agents.policies.openai_policy import OpenAIPolicy
from autoenv.shared.actions import RunAction, WriteFileAction


def act(policy: OpenAIPolicy, conversation: Conversation | None = None):
    async def go():
        try:
            return await policy.act(
                conversation or Conversation(instruction="Write hello to /app/out.txt", workdir="/app")
            )
        finally:
            await policy.aclose()

    return asyncio.run(go())


def policy_for(server, **kwargs) -> OpenAIPolicy:
    kwargs.setdefault("retry_base_sec", 0.01)
    return OpenAIPolicy(model=MODEL, base_url=server.url, api_key=kwargs.pop("api_key", "sk-test"), **kwargs)


def test_tool_call_reply_carries_token_ids_logprobs_and_policy_version(replay):
    server = replay([{"response": completion(1, content="Look first.", calls=[("run", {"command": "ls -la"})])}])
    reply = act(policy_for(server, temperature=0.7, max_tokens=256, seed=5))

    assert reply.invalid is None
    assert reply.actions == [RunAction(command="ls -la")]
    assert reply.calls[0].id == "chatcmpl-tool-10"
    assert reply.text == "Look first."
    assert reply.model == MODEL
    body = server.chat_requests()[0]
    assert body["tools"] and body["tool_choice"] == "auto"
    assert body["logprobs"] is True and body["return_token_ids"] is True  # Harbor's rollout-detail request
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 256, 6)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"].endswith("## Environment\n\n- Working directory: /app")
    recorded = server.exchanges[0]["response"]["body"]
    assert reply.completion_token_ids == recorded["choices"][0]["token_ids"]
    assert reply.prompt_token_ids == recorded["prompt_token_ids"]
    assert len(reply.logprobs) == len(reply.completion_token_ids)
    assert reply.usage.prompt_tokens == len(reply.prompt_token_ids)
    assert (reply.policy_version, reply.info["policy_version_source"]) == ("step-42", "header:x-policy-version")
    assert reply.llm_calls == 1 and reply.retries == []


def test_a_429_is_retried_with_backoff_and_recorded(replay):
    server = replay(
        [
            {"response": error(429, "Rate limit reached", "rate_limit_error", {"retry-after-ms": "120"})},
            {"expect": {"same_as_previous": True}, "response": completion(1, calls=[("run", {"command": "ls"})])},
        ]
    )
    started = time.monotonic()
    reply = act(policy_for(server))

    assert time.monotonic() - started >= 0.12  # the server's Retry-After was honoured
    assert server.served == 2 and server.problems == []
    assert len(reply.retries) == 1
    retry = reply.retries[0]
    assert (retry.attempt, retry.status, retry.wait_sec) == (1, 429, 0.12)
    assert "Rate limit reached" in retry.error
    assert reply.actions == [RunAction(command="ls")]


def test_server_errors_give_up_after_the_retry_budget(replay):
    server = replay([{"response": error(503, "overloaded", "server_error")}] * 3)
    with pytest.raises(PolicyEndpointError, match=r"HTTP 503 .* after 2 retries: overloaded"):
        act(policy_for(server, max_retries=2))
    assert server.served == 3


def test_tool_calling_falls_back_to_the_text_format(replay):
    server = replay(
        [
            {
                "expect": {"tools": True},
                "response": error(
                    400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
                ),
            },
            {
                "expect": {"tools": False, "contains": ["```write_file <path>"]},
                "response": completion(
                    1, content="```write_file /app/out.txt\nhello\n```", rollout=False, version=None
                ),
            },
        ]
    )
    policy = policy_for(server)
    reply = act(policy)

    assert server.problems == []
    assert reply.actions == [WriteFileAction(path="/app/out.txt", content="hello\n")]
    assert reply.info["tool_mode"] == "text" and "enable-auto-tool-choice" in reply.info["tool_mode_fallback"]
    assert policy.tool_definitions is None and "```run" in policy.system_prompt()
    assert reply.prompt_token_ids is None and reply.logprobs is None and reply.policy_version is None


def test_tool_mode_tools_does_not_fall_back(replay):
    server = replay([{"response": error(400, '"auto" tool choice requires --enable-auto-tool-choice')}])
    with pytest.raises(PolicyEndpointError, match="HTTP 400"):
        act(policy_for(server, tool_mode="tools"))


def test_provider_rejecting_token_ids_keeps_logprobs(replay):
    server = replay(
        [
            {"response": error(400, "Unrecognized request argument supplied: return_token_ids")},
            {"response": completion(1, calls=[("run", {"command": "ls"})])},
        ]
    )
    reply = act(policy_for(server))
    first, second = server.chat_requests()
    assert first["return_token_ids"] is True
    assert "return_token_ids" not in second and second["logprobs"] is True
    assert reply.info["dropped_request_fields"]


def test_a_reply_without_a_valid_action_is_reported_not_raised(replay):
    server = replay(
        [
            {"response": completion(1, calls=[("run", '{"command": "ls')])},
            {"response": completion(2, content="Let me think about this.", finish_reason="length")},
        ]
    )
    policy = policy_for(server)
    bad_args = act(OpenAIPolicy(model=MODEL, base_url=server.url, api_key="k"))
    assert bad_args.actions == [] and "not valid JSON" in bad_args.invalid
    assert bad_args.calls[0].error and bad_args.calls[0].arguments == {"_raw": '{"command": "ls'}
    prose = act(policy)
    assert "contains no action" in prose.invalid and "cut off at the max_tokens limit" in prose.invalid


def test_history_replays_tool_calls_and_their_results(replay):
    server = replay(
        [
            {"response": completion(1, calls=[("run", {"command": "ls"}), ("run", {"command": "pwd"})])},
            {"response": completion(2, calls=[("finish", {})])},
        ]
    )
    policy = policy_for(server)

    async def go():
        conversation = Conversation(instruction="task")
        first = await policy.act(conversation)
        results = [
            ActionResult(call_id=c.id, action=c.action, output=f"out of {c.action.command}", exit_code=0)
            for c in first.calls
        ]
        conversation.turns.append(Turn(reply=first, results=results))
        await policy.act(conversation)
        await policy.aclose()

    asyncio.run(go())
    messages = server.chat_requests()[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["chatcmpl-tool-10", "chatcmpl-tool-11"]
    assert [(m["tool_call_id"], m["content"]) for m in messages[3:]] == [
        ("chatcmpl-tool-10", "out of ls"),
        ("chatcmpl-tool-11", "out of pwd"),
    ]


def test_bad_key_is_a_clear_auth_error(replay):
    server = replay([{"response": completion(1, calls=[("finish", {})])}], api_key="sk-right")
    with pytest.raises(
        PolicyAuthError, match=r"rejected the API key \(HTTP 401: Incorrect API key provided.\).*OPENAI_API_KEY"
    ):
        act(policy_for(server, api_key="sk-wrong"))
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-wrong"
    assert server.served == 0  # not retried


def test_nothing_listening_is_a_clear_connection_error(closed_port_url):
    policy = OpenAIPolicy(
        model=MODEL, base_url=closed_port_url, api_key="k", retry_base_sec=0.01, max_connect_retries=1
    )
    with pytest.raises(
        PolicyConnectionError,
        match=r"cannot reach an OpenAI-compatible endpoint at http://127\.0\.0\.1:\d+/v1/ after 1 retry.*--base-url",
    ):
        act(policy)


def test_base_url_without_v1_is_a_clear_404(replay):
    server = replay([], prefix="/v1")
    policy = OpenAIPolicy(model=MODEL, base_url=server.url.removesuffix("/v1"), api_key="k")
    with pytest.raises(PolicyEndpointError, match=r"HTTP 404 .*--base-url is wrong .*/v1"):
        act(policy)


def test_context_overflow_ends_the_episode_not_the_trial(replay):
    server = replay(
        [
            {
                "response": error(
                    400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
                )
            }
        ]
    )
    with pytest.raises(ContextLengthExceededError) as info:
        act(policy_for(server))
    assert info.value.stop_reason == "context_length"


def test_configuration_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(PolicyConfigError, match="needs a model"):
        make_policy("openai", model=None, base_url="http://127.0.0.1:1/v1")
    with pytest.raises(PolicyConfigError, match="OPENAI_API_KEY is not set"):
        make_policy("openai", model="m")
    with pytest.raises(PolicyConfigError, match="does not take: success_rate"):
        make_policy("openai", model="m", base_url="http://x/v1", success_rate=0.5)
    with pytest.raises(PolicyConfigError, match="unknown policy 'claude'"):
        make_policy("claude")


def test_request_adaptations_are_bounded(replay):
    server = replay([{"response": error(400, "logprobs are not supported for this model")}] * 2)
    with pytest.raises(PolicyEndpointError, match="HTTP 400 .*logprobs are not supported"):
        act(policy_for(server))
    first, second = server.chat_requests()
    assert first["logprobs"] is True and "logprobs" not in second


def test_tool_errors_after_the_first_turn_are_not_a_fallback(replay):
    server = replay(
        [
            {"response": completion(1, calls=[("run", {"command": "ls"})])},
            {"response": error(400, "messages with role 'tool' must answer a preceding tool_calls message")},
        ]
    )
    policy = policy_for(server)

    async def go():
        conversation = Conversation(instruction="task")
        first = await policy.act(conversation)
        conversation.turns.append(Turn(reply=first, results=[ActionResult(call_id=first.calls[0].id, output="x")]))
        try:
            await policy.act(conversation)
        finally:
            await policy.aclose()

    with pytest.raises(PolicyEndpointError, match="role 'tool'"):
        asyncio.run(go())
    assert policy.tool_definitions is not None

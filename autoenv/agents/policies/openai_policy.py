"""A policy served by any OpenAI-compatible chat-completions endpoint.

Why not Harbor's LiteLLM client (``harbor.llms.lite_llm``)? Importing LiteLLM
costs seconds and tries to fetch a price table from the network on every
process start, which our offline sandboxes and short-lived workers pay for
nothing; and for RL we need the raw response (headers for the policy version,
vLLM's ``prompt_token_ids``/``token_ids``) and retries we can see. We keep
Harbor's conventions: ``logprobs=True`` plus ``extra_body.return_token_ids``
(dropped again if the provider rejects them), and the same
``prompt_token_ids``/``completion_token_ids``/``logprobs`` fields that
terminus-2 puts into ATIF ``Metrics`` and ``AgentContext.rollout_details``.

The client is built with ``max_retries=0`` and retried here, so every 429/5xx
is recorded on the step it delayed.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import re
import time
from typing import Any

import openai

from autoenv.agents.policies.base import (
    Call,
    ContextLengthExceededError,
    Conversation,
    PolicyAuthError,
    PolicyConfigError,
    PolicyConnectionError,
    PolicyEndpointError,
    PolicyReply,
    RetryRecord,
    Turn,
    Usage,
)
from autoenv.agents.policies.prompts import system_prompt, task_message
from autoenv.shared.actions import (
    TOOL_DEFINITIONS,
    InvalidActionError,
    action_from_tool_call,
    action_to_tool_call,
    parse_text_actions,
)

TOOL_MODES = ("auto", "tools", "text")
_VERSION_HEADERS = ("x-policy-version", "x-model-version", "x-weight-version")
_VERSION_FIELDS = ("policy_version", "weight_version", "model_version")
_CONTEXT_RE = re.compile(
    r"context.length|maximum context|context_length_exceeded|prompt is too long|too many (input )?tokens", re.I
)
_TOOLS_RE = re.compile(r"tool|function.?call", re.I)


class OpenAIPolicy:
    """Chat-completions policy with tool calling and a plain-text fallback."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tool_mode: str = "auto",
        rollout_details: bool = True,
        policy_version: str | None = None,
        seed: int | None = None,
        max_retries: int = 4,
        max_connect_retries: int = 2,
        retry_base_sec: float = 1.0,
        retry_max_sec: float = 30.0,
        request_timeout_sec: float = 300.0,
        extra_body: dict[str, Any] | None = None,
    ):
        if not model:
            raise PolicyConfigError("the openai policy needs a model name (--model, or AgentConfig.model_name)")
        if tool_mode not in TOOL_MODES:
            raise PolicyConfigError(f"tool_mode must be one of {', '.join(TOOL_MODES)}, got {tool_mode!r}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            if base_url is None:
                raise PolicyConfigError(
                    "OPENAI_API_KEY is not set; it is needed for the default OpenAI endpoint "
                    "(for a local vLLM/SGLang server pass --base-url, e.g. http://127.0.0.1:8000/v1)"
                )
            api_key = "EMPTY"  # local servers usually need none; one that does will answer 401
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.tool_mode = tool_mode
        self.policy_version = policy_version
        self.seed = seed
        self.max_retries = max_retries
        self.max_connect_retries = max_connect_retries
        self.retry_base_sec = retry_base_sec
        self.retry_max_sec = retry_max_sec
        self.extra_body = dict(extra_body or {})
        self._tools_on = tool_mode != "text"
        self._want_logprobs = rollout_details
        self._want_token_ids = rollout_details
        self._max_tokens_param = "max_tokens"
        self._jitter = random.Random(seed)
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=request_timeout_sec
        )
        self.base_url = str(self._client.base_url)

    # -- Policy protocol -------------------------------------------------------------

    @property
    def tool_definitions(self) -> list[dict[str, Any]] | None:
        return TOOL_DEFINITIONS if self._tools_on else None

    def system_prompt(self) -> str:
        return system_prompt(tools=self._tools_on)

    async def aclose(self) -> None:
        await self._client.close()

    async def act(self, conversation: Conversation) -> PolicyReply:
        turn_index = len(conversation.turns) + 1
        info: dict[str, Any] = {}
        retries: list[RetryRecord] = []
        for _ in range(6):  # each 400 below changes the request, so this only bounds bad luck
            params = self._params(conversation, turn_index)
            try:
                raw, latency = await self._create(params, retries)
                break
            except openai.BadRequestError as exc:
                message = _error_text(exc)
                lowered = message.lower()
                if _CONTEXT_RE.search(message):
                    raise ContextLengthExceededError(
                        f"the conversation exceeds the model's context: {message}"
                    ) from None
                if "max_completion_tokens" in message and self._max_tokens_param == "max_tokens" and self.max_tokens:
                    self._max_tokens_param = "max_completion_tokens"
                    continue
                # Hosted providers reject vLLM's return_token_ids (some models also logprobs);
                # play on without them rather than failing the episode.
                if self._want_token_ids and (
                    "return_token_ids" in lowered or "unrecognized request argument" in lowered
                ):
                    self._want_token_ids = False
                    info.setdefault("dropped_request_fields", []).append(message[:300])
                    continue
                if self._want_logprobs and "logprobs" in lowered:
                    self._want_logprobs = False
                    info.setdefault("dropped_request_fields", []).append(message[:300])
                    continue
                # Only the first request can show that the server has no tool calling; a
                # later 400 that mentions tools is a real error in what we sent.
                if self.tool_mode == "auto" and self._tools_on and not conversation.turns and _TOOLS_RE.search(message):
                    self._tools_on = False
                    info["tool_mode_fallback"] = message[:300]
                    continue
                raise PolicyEndpointError(f"HTTP 400 from {self._url()}: {message}") from None
        else:
            raise PolicyEndpointError(f"{self._url()} kept rejecting the request (HTTP 400); last: {info}")
        reply = self._reply(raw, turn_index)
        reply.latency_sec = latency
        reply.retries = retries
        reply.info.update(info)
        reply.info["tool_mode"] = "tools" if self._tools_on else "text"
        return reply

    # -- request -----------------------------------------------------------------------

    def _params(self, conversation: Conversation, turn_index: int) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": self.messages(conversation)}
        if self._tools_on:
            params["tools"] = TOOL_DEFINITIONS
            params["tool_choice"] = "auto"
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens:
            params[self._max_tokens_param] = self.max_tokens
        if self.seed is not None:
            params["seed"] = self.seed + turn_index
        if self._want_logprobs:
            params["logprobs"] = True
        extra_body = dict(self.extra_body)
        if self._want_token_ids:
            extra_body["return_token_ids"] = True
        if extra_body:
            params["extra_body"] = extra_body
        return params

    def messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The chat history for the next request, rebuilt from the conversation each turn."""
        return chat_messages(conversation, system=self.system_prompt(), tools=self._tools_on)

    async def _create(self, params: dict[str, Any], retries: list[RetryRecord]) -> tuple[Any, float]:
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            try:
                raw = await self._client.chat.completions.with_raw_response.create(**params)
                return raw, round(time.monotonic() - started, 3)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise PolicyAuthError(
                    f"the endpoint {self.base_url} rejected the API key (HTTP {exc.status_code}: {_error_text(exc)}); "
                    "set OPENAI_API_KEY to a key this endpoint accepts"
                ) from None
            except openai.NotFoundError as exc:
                raise PolicyEndpointError(
                    f"HTTP 404 from {self._url()}: {_error_text(exc)}. Either --base-url is wrong (it should be the "
                    f"API "
                    f"root, usually ending in /v1) or the model {self.model!r} is not served there"
                ) from None
            except openai.BadRequestError:
                raise
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APITimeoutError,
                openai.APIConnectionError,
                openai.APIStatusError,
            ) as exc:
                status = getattr(exc, "status_code", None)
                transient = status is None or status in (408, 409, 429) or status >= 500
                connect_only = isinstance(exc, openai.APIConnectionError) and not isinstance(
                    exc, openai.APITimeoutError
                )
                limit = self.max_connect_retries if connect_only else self.max_retries
                if not transient:
                    raise PolicyEndpointError(f"HTTP {status} from {self._url()}: {_error_text(exc)}") from None
                if attempt > limit:
                    raise self._give_up(exc, attempt - 1) from None
                wait = self._backoff(exc, attempt)
                retries.append(
                    RetryRecord(attempt=attempt, status=status, error=_error_text(exc)[:300], wait_sec=round(wait, 3))
                )
                await asyncio.sleep(wait)
            except openai.APIResponseValidationError as exc:
                raise PolicyEndpointError(
                    f"{self._url()} answered with something that is not a chat completion: {exc}"
                ) from None

    def _give_up(self, exc: Exception, n_retries: int) -> Exception:
        after = f" after {n_retries} retr{'y' if n_retries == 1 else 'ies'}" if n_retries else ""
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return PolicyConnectionError(
                f"cannot reach an OpenAI-compatible endpoint at {self.base_url}{after} ({type(cause).__name__}: "
                f"{cause}); "
                "check --base-url (vLLM and SGLang serve under /v1) and that the server is running"
            )
        status = getattr(exc, "status_code", None)
        return PolicyEndpointError(f"HTTP {status} from {self._url()}{after}: {_error_text(exc)}")

    def _backoff(self, exc: Exception, attempt: int) -> float:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        hinted = _retry_after(headers)
        if hinted is not None:
            return min(hinted, self.retry_max_sec)
        base = min(self.retry_max_sec, self.retry_base_sec * 2 ** (attempt - 1))
        return base * (0.5 + 0.5 * self._jitter.random())

    def _url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    # -- response ----------------------------------------------------------------------

    def _reply(self, raw: Any, turn_index: int) -> PolicyReply:
        completion = raw.parse()
        if not completion.choices:
            raise PolicyEndpointError(f"{self._url()} returned a completion without choices")
        choice = completion.choices[0]
        msg = choice.message
        text = msg.content or ""
        extra = msg.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        calls: list[Call] = []
        invalid: str | None = None
        if msg.tool_calls:
            wire_calls = []
            for i, tc in enumerate(msg.tool_calls):
                fn = getattr(tc, "function", None)
                name = getattr(fn, "name", None) or "?"
                arguments = getattr(fn, "arguments", None) or ""
                call_id = tc.id or f"call_{turn_index}_{i + 1}"
                wire_calls.append(
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                )
                try:
                    action = action_from_tool_call(name, arguments)
                    calls.append(Call(id=call_id, name=name, arguments=action_to_tool_call(action)[1], action=action))
                except InvalidActionError as exc:
                    calls.append(Call(id=call_id, name=name, arguments=_loose_args(arguments), error=str(exc)))
                    invalid = invalid or f"tool call {name}: {exc}"
            message: dict[str, Any] = {"role": "assistant", "content": msg.content, "tool_calls": wire_calls}
        else:
            message = {"role": "assistant", "content": text}
            try:
                for i, action in enumerate(parse_text_actions(text)):
                    name, args = action_to_tool_call(action)
                    calls.append(Call(id=f"call_{turn_index}_{i + 1}", name=name, arguments=args, action=action))
            except InvalidActionError as exc:
                invalid = str(exc)
        if invalid and choice.finish_reason == "length":
            invalid += " (the reply was cut off at the max_tokens limit)"
        usage = None
        if completion.usage is not None:
            details = getattr(completion.usage, "prompt_tokens_details", None)
            usage = Usage(
                prompt_tokens=completion.usage.prompt_tokens or 0,
                completion_tokens=completion.usage.completion_tokens or 0,
                cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
            )
        logprobs = None
        if choice.logprobs is not None and choice.logprobs.content:
            logprobs = [float(t.logprob) for t in choice.logprobs.content]
        top = completion.model_extra or {}
        prompt_ids = top.get("prompt_token_ids") or (choice.model_extra or {}).get("prompt_token_ids")
        completion_ids = (choice.model_extra or {}).get("token_ids")
        version, source = self._version(raw.headers, top)
        return PolicyReply(
            text=text,
            reasoning=reasoning,
            calls=calls,
            invalid=invalid,
            message=message,
            model=completion.model or self.model,
            prompt_token_ids=_int_list(prompt_ids),
            completion_token_ids=_int_list(completion_ids),
            logprobs=logprobs,
            usage=usage,
            finish_reason=choice.finish_reason,
            policy_version=version,
            llm_calls=1,
            info={"response_id": completion.id, "policy_version_source": source}
            if version
            else {"response_id": completion.id},
        )

    def _version(self, headers: Any, body: dict[str, Any]) -> tuple[str | None, str | None]:
        """Which weights answered: a serving-side header/field wins over the configured label."""
        for name in _VERSION_HEADERS:
            value = headers.get(name)
            if value:
                return str(value), f"header:{name}"
        for name in _VERSION_FIELDS:
            if body.get(name) is not None:
                return str(body[name]), f"field:{name}"
        if self.policy_version is not None:
            return str(self.policy_version), "config"
        return None, None


def _observation_text(turn: Turn) -> str:
    if turn.feedback and not turn.results:
        return turn.feedback
    parts = []
    for result in turn.results:
        parts.append(f"### {_describe(result.action)}\n{result.output}")
    if turn.feedback:
        parts.append(turn.feedback)
    return "\n\n".join(parts) if parts else "(no output)"


def _describe(action: Any) -> str:
    if action is None:
        return "invalid action"
    kind = action.kind
    if kind == "run":
        first = action.command.strip().splitlines()[0] if action.command.strip() else ""
        return f"run: {first[:200]}"
    if kind in ("read_file", "write_file"):
        return f"{kind}: {action.path}"
    return kind


def _as_text_block(call: Call) -> str:
    action = call.action
    if action is None:
        return json.dumps({"action": call.name, **call.arguments})
    if action.kind == "run":
        return f"```run\n{action.command}\n```"
    if action.kind == "read_file":
        return f"```read_file {action.path}\n```"
    if action.kind == "write_file":
        fence = "````" if "```" in action.content else "```"
        return f"{fence}write_file {action.path}\n{action.content.removesuffix(chr(10))}\n{fence}"
    return f"```finish\n{action.message}\n```"


def _loose_args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
        if isinstance(value, dict):
            return value
    except (json.JSONDecodeError, TypeError):
        pass
    return {"_raw": arguments}


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value) and value:
        return value
    return None


def _retry_after(headers: Any) -> float | None:
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_text(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if body.get("message"):
            return str(body["message"])
    return str(getattr(exc, "message", None) or exc)


def chat_messages(conversation: Conversation, *, system: str, tools: bool) -> list[dict[str, Any]]:
    """A conversation as the OpenAI chat messages a policy sends (and a proposer episode records)."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": task_message(conversation.instruction, conversation.workdir, conversation.environment),
        },
    ]
    for turn in conversation.turns:
        msgs.extend(turn_messages(turn, tools=tools))
    return msgs


def assistant_message(reply: PolicyReply, *, tools: bool) -> dict[str, Any]:
    """The assistant message of one reply, exactly as it is replayed to the endpoint."""
    if tools and reply.message and reply.message.get("tool_calls"):
        return reply.message
    text = reply.text
    if not text and reply.calls:  # a tool-call turn replayed in text mode, or a scripted turn
        text = "\n\n".join(_as_text_block(c) for c in reply.calls)
    return {"role": "assistant", "content": text}


def turn_messages(turn: Turn, *, tools: bool) -> list[dict[str, Any]]:
    reply = turn.reply
    message = assistant_message(reply, tools=tools)
    if message.get("tool_calls"):
        out: list[dict[str, Any]] = [message]
        results = {r.call_id: r for r in turn.results}
        for call in reply.calls:
            result = results.get(call.id)
            content = result.output if result else (turn.feedback or "Not run: the task had already been finished.")
            out.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return out
    return [message, {"role": "user", "content": _observation_text(turn)}]

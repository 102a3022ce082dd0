"""One run of the terminal agent (:mod:`autoenv.agents.terminal`): the turn loop, its limits, and the record.

Every turn is recorded before the next one starts (ATIF steps through :class:`TrajectoryRecorder`, token ids and
log-probs for ``AgentContext.rollout_details``, the counters in ``context.metadata``), so a run cut short by a
limit or an unreachable policy leaves what it did.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.agent.rollout_detail import RolloutDetail
from harbor.models.trajectories import Agent, FinalMetrics, Metrics, Observation, ObservationResult, ToolCall

from autoenv.agents.environment_note import probe as probe_environment
from autoenv.agents.execute import execute
from autoenv.agents.policies.base import Conversation, Policy, PolicyError, PolicyReply, Turn
from autoenv.agents.policies.prompts import command_limit_note, invalid_reply_feedback, task_message
from autoenv.agents.trajectory import TrajectoryRecorder
from autoenv.shared.actions import FinishAction


class TerminalRun:
    """State of one ``run``: the recorder, counters and the AgentContext kept current.

    ``agent`` is the :class:`autoenv.agents.terminal.TerminalAgent` (its ``options`` and ``_make_policy``), typed
    as Harbor's agent so that this module does not import the one that imports it."""

    def __init__(self, agent: BaseAgent, instruction: str, environment: BaseEnvironment, context: AgentContext):
        self.agent = agent
        self.o = agent.options
        self.instruction = instruction
        self.environment = environment
        self.context = context
        self.started = time.monotonic()
        self.policy: Policy | None = None
        self.recorder = TrajectoryRecorder(
            agent.logs_dir,
            agent=Agent(
                name=agent.name(),
                version=agent.version() or "unknown",
                model_name=agent.model_name,
                extra=self._agent_extra(),
            ),
            session_id=agent.session_id,
        )
        self.n_turns = 0
        self.n_actions = 0
        self.n_invalid = 0
        self.invalid_streak = 0
        self.n_retries = 0
        self.tokens = {"prompt": 0, "completion": 0, "cached": 0}
        self.rollout: dict[str, list[Any]] = {
            "prompt_token_ids": [],
            "completion_token_ids": [],
            "logprobs": [],
            "policy_version": [],
        }
        self.stop_reason: str | None = None
        self.error: dict[str, Any] | None = None
        self.finish_message: str | None = None
        self.workdir: str | None = None
        self.environment_note: str | None = None
        self.last_version: str | None = None
        self.policy_info: dict[str, Any] = {}

    def _agent_extra(self) -> dict[str, Any]:
        o = self.o
        keys = ["seed", "max_wall_sec", "policy_version"]
        keys += {"scripted": ["success_rate"], "learned": ["table"]}.get(
            o.policy, ["temperature", "max_tokens", "token_budget", "tool_mode", "base_url"]
        )
        extra: dict[str, Any] = {"policy": o.policy, "max_turns": o.max_turns}
        extra.update({key: getattr(o, key) for key in keys if getattr(o, key) is not None})
        return extra

    def remaining_sec(self) -> float | None:
        if self.o.max_wall_sec is None:
            return None
        return self.o.max_wall_sec - (time.monotonic() - self.started)

    def limit_reached(self) -> str | None:
        if self.n_turns >= self.o.max_turns:
            return "max_turns"
        remaining = self.remaining_sec()
        if remaining is not None and remaining <= 0:
            return "wall_time"
        if self.o.token_budget is not None and self.tokens["prompt"] + self.tokens["completion"] >= self.o.token_budget:
            return "token_budget"
        return None

    async def play(self) -> None:
        try:
            self.policy = self.agent._make_policy()
            # one exec: the working directory and the environment note (OS, shell, tools), cached per image
            self.workdir, note = await probe_environment(self.environment)
            self.environment_note = "\n".join(filter(None, [note, command_limit_note(self.o.command_timeout_sec)]))
            conversation = Conversation(
                instruction=self.instruction, workdir=self.workdir, environment=self.environment_note
            )
            self.recorder.add(source="system", message=self.policy.system_prompt())
            self.recorder.add(
                source="user", message=task_message(self.instruction, self.workdir, self.environment_note)
            )
            while True:
                self.stop_reason = self.limit_reached()
                if self.stop_reason:
                    break
                try:
                    reply = await self.policy.act(conversation)
                except PolicyError as exc:
                    if exc.stop_reason == "policy_error":
                        raise
                    self._record_error(exc)  # e.g. context length: the episode ends, the trial goes on
                    self.stop_reason = exc.stop_reason
                    break
                if self.n_turns == 0:
                    # The policy may have switched to text mode on its first request.
                    self.recorder.update(1, message=self.policy.system_prompt())
                    self.recorder.agent = self.recorder.agent.model_copy(
                        update={"tool_definitions": self.policy.tool_definitions}
                    )
                turn, finished = await self._play_turn(reply)
                conversation.turns.append(turn)
                self._record_turn(turn)
                self.recorder.flush()
                self._update_context()
                if finished:
                    self.stop_reason = "finish"
                    break
                if self.invalid_streak >= self.o.max_invalid_replies:
                    self.stop_reason = "invalid_actions"
                    break
        except PolicyError as exc:
            self.stop_reason = exc.stop_reason
            self._record_error(exc)
            raise
        except asyncio.CancelledError:
            self.stop_reason = self.stop_reason or "cancelled"  # Harbor's agent timeout
            raise
        except Exception as exc:
            self.stop_reason = "agent_error"
            self._record_error(exc)
            raise
        finally:
            await self._finish()

    async def _play_turn(self, reply: PolicyReply) -> tuple[Turn, bool]:
        assert self.policy is not None
        self.n_turns += 1
        if reply.invalid or not reply.actions:
            self.n_invalid += 1
            self.invalid_streak += 1
            reason = reply.invalid or "the reply contains no action"
            return Turn(
                reply=reply, feedback=invalid_reply_feedback(reason, tools=self.policy.tool_definitions is not None)
            ), False
        self.invalid_streak = 0
        results = []
        finished = False
        for call in reply.calls:
            remaining = self.remaining_sec()
            if remaining is not None and remaining <= 0:
                break
            timeout = (
                self.o.command_timeout_sec
                if remaining is None
                else max(1.0, min(self.o.command_timeout_sec, remaining))
            )
            result = await execute(
                self.environment, call.action, call.id, timeout_sec=timeout, max_output_chars=self.o.max_output_chars
            )
            results.append(result)
            self.n_actions += 1
            if isinstance(call.action, FinishAction):
                finished = True
                self.finish_message = call.action.message
                break
        return Turn(reply=reply, results=results), finished

    # -- recording ---------------------------------------------------------------------

    def _record_turn(self, turn: Turn) -> None:
        reply = turn.reply
        tool_calls = [
            ToolCall(
                tool_call_id=c.id,
                function_name=c.name,
                arguments=c.arguments,
                extra={"error": c.error} if c.error else None,
            )
            for c in reply.calls
        ]
        results = [
            ObservationResult(
                source_call_id=r.call_id,
                content=r.output,
                extra={
                    k: v
                    for k, v in {
                        "exit_code": r.exit_code,
                        "error": r.error,
                        "duration_sec": r.duration_sec,
                        "truncated": r.truncated or None,
                    }.items()
                    if v is not None
                },
            )
            for r in turn.results
        ]
        if turn.feedback:
            if reply.calls:
                results = [
                    ObservationResult(source_call_id=c.id, content=turn.feedback, extra={"error": "invalid_action"})
                    for c in reply.calls
                ]
            else:
                results.append(ObservationResult(content=turn.feedback, extra={"error": "invalid_action"}))
        metrics = None
        if reply.llm_calls:
            usage = reply.usage
            metric_extra: dict[str, Any] = {"latency_sec": reply.latency_sec, "finish_reason": reply.finish_reason}
            if reply.retries:
                metric_extra["retries"] = [r.model_dump() for r in reply.retries]
            metrics = Metrics(
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                cached_tokens=(usage.cached_tokens or None) if usage else None,
                prompt_token_ids=reply.prompt_token_ids,
                completion_token_ids=reply.completion_token_ids,
                logprobs=reply.logprobs,
                extra={k: v for k, v in metric_extra.items() if v is not None},
            )
            if usage:
                self.tokens["prompt"] += usage.prompt_tokens
                self.tokens["completion"] += usage.completion_tokens
                self.tokens["cached"] += usage.cached_tokens
            self.n_retries += len(reply.retries)
            self.rollout["prompt_token_ids"].append(reply.prompt_token_ids or [])
            self.rollout["completion_token_ids"].append(reply.completion_token_ids or [])
            self.rollout["logprobs"].append(reply.logprobs or [])
            self.rollout["policy_version"].append(reply.policy_version)
        self.last_version = reply.policy_version or self.last_version
        extra: dict[str, Any] = {"turn": self.n_turns, "policy": self.o.policy, "policy_version": reply.policy_version}
        if reply.invalid or turn.feedback:
            extra["invalid_reply"] = reply.invalid or "no action"
        extra.update({k: v for k, v in reply.info.items() if v is not None})
        for key in ("decision", "tool_mode_fallback"):
            if key in reply.info:
                self.policy_info[key] = reply.info[key]
        if "tool_mode" in reply.info:
            self.policy_info["tool_mode"] = reply.info["tool_mode"]
        self.recorder.add(
            source="agent",
            model_name=reply.model if reply.llm_calls else None,
            message=reply.text,
            reasoning_content=reply.reasoning if reply.llm_calls else None,
            tool_calls=tool_calls or None,
            observation=Observation(results=results),
            metrics=metrics,
            llm_call_count=reply.llm_calls,
            extra={k: v for k, v in extra.items() if v is not None},
        )

    def _record_error(self, exc: BaseException) -> None:
        self.error = {"type": type(exc).__name__, "message": str(exc)}
        self.recorder.add(
            source="system",
            message=f"The episode stopped: {type(exc).__name__}: {exc}",
            extra={"error": self.error, "turn": self.n_turns},
        )

    def _rollout_details(self) -> list[RolloutDetail] | None:
        if not self.rollout["policy_version"]:
            return None
        detail: RolloutDetail = {}
        for key in ("prompt_token_ids", "completion_token_ids", "logprobs"):
            if any(self.rollout[key]):
                detail[key] = self.rollout[key]  # type: ignore[literal-required]
        if any(v is not None for v in self.rollout["policy_version"]):
            detail["extra"] = {"policy_version": self.rollout["policy_version"]}
        return [detail] if detail else None

    def _metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "n_turns": self.n_turns,
            "stop_reason": self.stop_reason,
            "policy": self.o.policy,
            "policy_version": self.last_version or self.o.policy_version,
            "n_actions": self.n_actions,
            "n_invalid_replies": self.n_invalid,
            "n_retries": self.n_retries,
            "workdir": self.workdir,
            "elapsed_sec": round(time.monotonic() - self.started, 3),
        }
        if self.o.policy in ("scripted", "learned") and self.policy is not None:
            meta["seed"] = getattr(self.policy, "seed", self.o.seed)
        elif self.o.seed is not None:
            meta["seed"] = self.o.seed
        meta.update(self.policy_info)
        if self.finish_message is not None:
            meta["finish_message"] = self.finish_message
        if self.error:
            meta["error"] = self.error
        return meta

    def _update_context(self) -> None:
        c = self.context
        llm = bool(self.rollout["policy_version"])
        c.n_input_tokens = self.tokens["prompt"] if llm else None
        c.n_output_tokens = self.tokens["completion"] if llm else None
        c.n_cache_tokens = self.tokens["cached"] if llm else None
        c.rollout_details = self._rollout_details()
        c.metadata = self._metadata()

    async def _finish(self) -> None:
        self.stop_reason = self.stop_reason or "agent_error"
        self._update_context()
        llm = bool(self.rollout["policy_version"])
        self.recorder.final_metrics = FinalMetrics(
            total_prompt_tokens=self.tokens["prompt"] if llm else None,
            total_completion_tokens=self.tokens["completion"] if llm else None,
            total_cached_tokens=self.tokens["cached"] if llm else None,
            total_steps=len(self.recorder.steps),
            extra={
                "stop_reason": self.stop_reason,
                "n_turns": self.n_turns,
                "n_invalid_replies": self.n_invalid,
                "n_retries": self.n_retries,
            },
        )
        try:
            self.recorder.flush()
        except Exception as exc:  # noqa: BLE001 - never mask the real outcome with a recording failure
            self.agent.logger.error("could not write the trajectory: %s", exc)
        if self.policy is not None:
            try:
                await asyncio.wait_for(self.policy.aclose(), timeout=5)
            except Exception as exc:  # noqa: BLE001 - closing is best effort at the end of an episode
                self.agent.logger.debug("closing the policy failed: %s", exc)

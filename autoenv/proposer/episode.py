"""A proposer episode as the policy lived it: the training sample of one proposer attempt.

GRPO trains on the context the policy actually saw and the tokens it actually
produced. For the proposer that is, per method:

- ``prompt`` / ``feedback`` with a served model: the brief, every reply and
  every feedback round, rendered exactly as the requests sent them (system
  prompt, brief, assistant tool calls, tool answers carrying the validator's
  feedback), plus each call's token ids and log-probs when the endpoint
  returned them;
- ``agentic``: the proposer's own ATIF trajectory (brief, every tool call and
  its result) from its trial, with its token turns;
- the offline scripted proposer: the same chat it would have had as a model
  (the real brief and FORMAT.md, its files as ``write_file`` calls, the real
  feedback), so an external trainer sees the same shape for every method.

Episodes are written next to the attempt (``<workspace>/.proposer/episodes``)
and referenced from the store (``attempts.episode_path``), so a resumed step
builds the same batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autoenv.agents.policies.base import ActionResult, Conversation, PolicyReply, Turn
from autoenv.shared.actions import FinishAction, WriteFileAction
from autoenv.shared.episodes import EpisodeSource, ProposerEpisode, TokenTurn


def from_conversation(
    conversation: Conversation,
    last: PolicyReply | None,
    *,
    system: str,
    tools: bool,
    replies: list[PolicyReply],
    source: EpisodeSource = "model",
) -> ProposerEpisode:
    """The chat of a written-task conversation: every request's context plus the final reply.

    ``conversation`` holds every turn up to the last request; ``last`` is the
    reply to that request (not yet a turn, since nothing answered it).
    """
    from autoenv.agents.policies.openai_policy import assistant_message, chat_messages

    messages = chat_messages(conversation, system=system, tools=tools)
    if last is not None:
        messages.append(assistant_message(last, tools=tools))
    return ProposerEpisode(
        source=source,
        messages=messages,
        turns=token_turns(replies),
        policy_versions=[r.policy_version for r in replies if r.policy_version],
    )


def token_turns(replies: list[PolicyReply]) -> list[TokenTurn] | None:
    """Exact turns when every model call returned its ids (all or nothing, as for solver trajectories)."""
    model_calls = [r for r in replies if r.llm_calls]
    if not model_calls or any(not r.prompt_token_ids or r.completion_token_ids is None for r in model_calls):
        return None
    turns = []
    for reply in model_calls:
        logprobs = (
            reply.logprobs
            if reply.logprobs is not None and len(reply.logprobs) == len(reply.completion_token_ids or [])
            else None
        )
        turns.append(
            TokenTurn(
                prompt_token_ids=reply.prompt_token_ids or [],
                completion_token_ids=reply.completion_token_ids or [],
                logprobs=logprobs,
            )
        )
    return turns


def from_trajectory(path: Path | str) -> ProposerEpisode:
    """The agentic proposer's episode: its trial's ATIF trajectory."""
    from autoenv.train.trajectories import load_trajectory_json, trajectory_to_messages, trajectory_token_turns

    data = load_trajectory_json(path)
    versions = [str(v) for s in data.get("steps") or [] if (v := ((s.get("extra") or {}).get("policy_version")))]
    return ProposerEpisode(
        source="agent",
        messages=trajectory_to_messages(data),
        turns=trajectory_token_turns(data),
        trajectory_path=str(path),
        policy_versions=versions,
    )


def write_actions(path: str, data: str | bytes) -> list[Any]:
    """One ``write_file`` per file: text as it is; bytes that are not UTF-8 (.xlsx, .docx) as base64 (its
    ``encoding``), so the written methods, which run nothing, write binary fixtures the same way."""
    import base64

    if isinstance(data, str):
        return [WriteFileAction(path=path, content=data)]
    return [WriteFileAction(path=path, content=base64.b64encode(data).decode(), encoding="base64")]


def read_task_files(task_dir: Path) -> dict[str, str | bytes]:
    """Every file of a task folder (verdict records aside): text where it decodes, bytes otherwise."""
    files: dict[str, str | bytes] = {}
    for path in sorted(Path(task_dir).rglob("*")):
        if path.is_file() and ".autoenv" not in path.relative_to(task_dir).parts and "__pycache__" not in path.parts:
            data = path.read_bytes()
            try:
                files[path.relative_to(task_dir).as_posix()] = data.decode()
            except UnicodeDecodeError:
                files[path.relative_to(task_dir).as_posix()] = data
    return files


def feedback_turn(last: PolicyReply, feedback: str, task_name: str) -> Turn:
    """The turn that answers a written task's reply: each call acknowledged, the validator's feedback on the last.

    Here, not in :mod:`autoenv.proposer.llm`: the scripted episode answers its replies the same way, and the
    episode must not need the LLM loop."""
    from autoenv.proposer.written import observation

    results = [ActionResult(call_id=c.id, action=c.action, output=observation(c)) for c in last.calls]
    note = (
        f"Validation of tasks/{task_name} in a separate sandbox:\n\n{feedback}\n\n"
        "Rewrite the files that need to change (complete new content with write_file; remove a file with "
        "remove_file), then call finish."
    )
    # in tool mode only call results reach the model, so the feedback rides on the last one
    if results:
        results[-1] = results[-1].model_copy(update={"output": f"{results[-1].output}\n\n{note}"})
        return Turn(reply=last, results=results)
    return Turn(reply=last, feedback=note)


class ScriptedEpisode:
    """The offline proposer's attempt written down as the chat a model would have had with the same brief.

    Each draft or repair is one assistant reply of ``write_file`` calls (and
    ``rm`` for deletions); each validation between them comes back as the
    answer to that reply, exactly as :class:`~autoenv.proposer.llm.ModelTaskWriter`
    sends it to a served model.
    """

    def __init__(self, instruction: str, task_name: str):
        self.task_name = task_name
        self.conversation = Conversation(instruction=instruction, workdir=None)
        self.replies: list[PolicyReply] = []
        self._feedback: str | None = None

    def write(self, files: dict[str, str | bytes], deletions: list[str] = (), note: str = "") -> None:
        from autoenv.agents.policies.base import Call
        from autoenv.proposer.written import REMOVE_FILE
        from autoenv.shared.actions import action_to_tool_call

        if self.replies:
            self.conversation.turns.append(feedback_turn(self.replies[-1], self._feedback or "", self.task_name))
        actions = [a for rel, data in sorted(files.items()) for a in write_actions(rel, data)]
        named: list[tuple[str, dict[str, Any], Any]] = [(*action_to_tool_call(a), a) for a in actions]
        named += [(REMOVE_FILE, {"path": d}, None) for d in deletions]
        named.append(
            ("finish", {"message": f"tasks/{self.task_name}"}, FinishAction(message=f"tasks/{self.task_name}"))
        )
        turn = len(self.replies) + 1
        calls, wire = [], []
        for i, (name, args, action) in enumerate(named):
            call_id = f"call_{turn}_{i + 1}"
            calls.append(Call(id=call_id, name=name, arguments=args, action=action))
            wire.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                }
            )
        self.replies.append(
            PolicyReply(
                text=note,
                calls=calls,
                message={"role": "assistant", "content": note, "tool_calls": wire},
                policy_version="scripted",
                llm_calls=0,
            )
        )
        self._feedback = None

    def feedback(self, text: str) -> None:
        self._feedback = text

    def episode(self) -> ProposerEpisode:
        from autoenv.proposer.written import author_system

        return from_conversation(
            self.conversation,
            self.replies[-1] if self.replies else None,
            system=author_system(tools=True),
            tools=True,
            replies=self.replies,
            source="scripted",
        )

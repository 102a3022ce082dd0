"""ATIF trajectories (Harbor's ``trajectory.json``) -> what a trainer consumes.

Two views of one episode:

- :func:`trajectory_to_messages`: chat messages for re-tokenisation with the
  policy's chat template, the fallback that works for any agent and endpoint;
- :func:`trajectory_token_turns`: the exact prompt/completion token ids and
  log-probs of every model call, when the endpoint returned them (ATIF
  ``metrics.prompt_token_ids`` / ``completion_token_ids`` / ``logprobs``), so
  training sees precisely what was sampled, with no re-tokenisation drift.

Works on the JSON (a path, a logs dir, a dict) or on a Harbor ``Trajectory``
object, but never imports Harbor: Harbor needs Python 3.12 and this module is
also used by tools that run in the 3.11 training environment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from autoenv.train.batch import TokenTurn, TrainingSample

__all__ = ["load_trajectory_json", "trajectory_to_messages", "trajectory_token_turns", "sample_from_trajectory"]

TRAJECTORY_JSON = "trajectory.json"

ToolStyle = Literal["structured", "text"]


def load_trajectory_json(source: Any) -> dict[str, Any]:
    """The trajectory as a JSON dict, from a file, a logs dir, a dict or a Harbor ``Trajectory``."""
    if isinstance(source, dict):
        return source
    if hasattr(source, "to_json_dict"):  # harbor.models.trajectories.Trajectory
        return source.to_json_dict()
    if hasattr(source, "model_dump"):
        return source.model_dump(mode="json", exclude_none=True)
    path = Path(source)
    if path.is_dir():
        path = path / TRAJECTORY_JSON
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _text(content: Any) -> str:
    """ATIF content is a string or a list of parts; media become placeholders, since the policy is text-only."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") == "text":
            parts.append(part.get("text") or "")
        else:
            source = part.get("source") or {}
            parts.append(f"[{part.get('type', 'media')}: {source.get('path', '')}]")
    return "\n".join(parts)


def _tool_call_text(call: dict[str, Any]) -> str:
    return json.dumps({"tool": call.get("function_name"), "arguments": call.get("arguments") or {}}, ensure_ascii=False)


def trajectory_to_messages(
    source: Any, *, tools: ToolStyle = "structured", train_non_llm_steps: bool = True
) -> list[dict[str, Any]]:
    """Chat messages of the episode, in the order the model saw them.

    ``tools="structured"`` keeps OpenAI-style ``tool_calls`` on assistant
    messages and ``role: tool`` results (for chat templates with tool support);
    ``"text"`` folds calls into the assistant text and results into a user
    message, for templates without it. Assistant messages that must not be
    trained on carry ``"train": False``: ATIF copied context always, and
    deterministic dispatches (``llm_call_count == 0``) unless
    ``train_non_llm_steps`` (on by default so that scripted policies, the
    offline flywheel's solver, still yield training data).
    """
    trajectory = load_trajectory_json(source)
    messages: list[dict[str, Any]] = []
    for step in trajectory.get("steps") or []:
        source_kind = step.get("source")
        text = _text(step.get("message"))
        calls = step.get("tool_calls") or []
        if source_kind == "agent":
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if step.get("reasoning_content"):
                message["reasoning_content"] = step["reasoning_content"]
            if calls and tools == "structured":
                message["tool_calls"] = [
                    {
                        "id": c.get("tool_call_id"),
                        "type": "function",
                        "function": {"name": c.get("function_name"), "arguments": c.get("arguments") or {}},
                    }
                    for c in calls
                ]
            elif calls:
                message["content"] = "\n".join(filter(None, [text, *(_tool_call_text(c) for c in calls)]))
            if step.get("is_copied_context") or (step.get("llm_call_count") == 0 and not train_non_llm_steps):
                message["train"] = False
            messages.append(message)
        elif source_kind in ("system", "user"):
            if text or source_kind == "user":
                messages.append({"role": source_kind, "content": text})
        else:
            raise ValueError(f"step {step.get('step_id')}: unknown ATIF source {source_kind!r}")
        messages.extend(_observation_messages(step, tools))
    return messages


def _observation_messages(step: dict[str, Any], tools: ToolStyle) -> list[dict[str, Any]]:
    """Tool results answer their call as ``role: tool``; anything else is shown to the model as a user turn."""
    observation = step.get("observation") or {}
    results = observation.get("results") or []
    call_ids = {c.get("tool_call_id") for c in step.get("tool_calls") or []}
    out: list[dict[str, Any]] = []
    loose: list[str] = []
    for result in results:
        content = _text(result.get("content"))
        call_id = result.get("source_call_id")
        if tools == "structured" and call_id and call_id in call_ids:
            out.append({"role": "tool", "tool_call_id": call_id, "content": content})
        else:
            loose.append(content)
    if loose:
        out.append({"role": "user", "content": "\n\n".join(loose)})
    return out


def trajectory_token_turns(source: Any) -> list[TokenTurn] | None:
    """Exact tokens of every model call, or None when any call lacks them (then re-tokenise instead).

    All or nothing: mixing exact turns with re-tokenised ones would train part
    of an episode on tokens the model never produced.
    """
    trajectory = load_trajectory_json(source)
    turns: list[TokenTurn] = []
    for step in trajectory.get("steps") or []:
        if step.get("source") != "agent" or step.get("is_copied_context") or step.get("llm_call_count") == 0:
            continue
        metrics = step.get("metrics") or {}
        prompt, completion = metrics.get("prompt_token_ids"), metrics.get("completion_token_ids")
        if not prompt or completion is None:
            return None
        logprobs = metrics.get("logprobs")
        if logprobs is not None and len(logprobs) != len(completion):
            logprobs = None  # a truncated logprob list is worse than none: the ratio would be misaligned
        turns.append(TokenTurn(prompt_token_ids=prompt, completion_token_ids=completion, logprobs=logprobs))
    return turns or None


def sample_from_trajectory(
    source: Any, *, role: Literal["solver", "proposer"] = "solver", tools: ToolStyle = "structured", **fields: Any
) -> TrainingSample:
    """A training sample with both views filled in; ``fields`` are the store keys, reward and advantage."""
    trajectory = load_trajectory_json(source)
    meta = dict(fields.pop("meta", {}) or {})
    if isinstance(source, (str, Path)):
        meta.setdefault("trajectory_path", str(source))
    return TrainingSample(
        role=role,
        messages=trajectory_to_messages(trajectory, tools=tools),
        turns=trajectory_token_turns(trajectory),
        meta=meta,
        **fields,
    )

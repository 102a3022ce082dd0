"""What the written methods (``prompt``, ``feedback``) offer a model: the tools they honour and nothing else.

In these methods the model only writes files: nothing runs while it writes, and the harness judges each reply in
separate sandboxes. So the model is offered ``write_file`` (text as UTF-8 byte for byte, or base64 for other bytes),
``remove_file`` and ``finish``, never ``run`` or ``read_file`` (issue 42: a brief that offered ``run`` and said
"nothing can be run here" was at odds with itself). The system prompt says the same. A served model
(:class:`AuthorPolicy`) and the scripted proposer's recorded chat (:class:`~autoenv.proposer.episode.ScriptedEpisode`)
get the same tools and system prompt, so every episode of these methods has one shape.
"""

from __future__ import annotations

from typing import Any

from autoenv.agents.policies.base import Call, PolicyReply
from autoenv.agents.policies.openai_policy import OpenAIPolicy
from autoenv.shared.actions import TOOL_DEFINITIONS, FinishAction, RunAction, WriteFileAction

#: The tool that removes a file of the task (not an action of the terminal agent: only these methods honour it).
REMOVE_FILE = "remove_file"

_REMOVE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": REMOVE_FILE,
        "description": "Remove a file of the task (a path relative to the task folder).",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The file to remove, relative to the task."}},
            "required": ["path"],
        },
    },
}


def author_tools() -> list[dict[str, Any]]:
    """The OpenAI tools of the written methods: write_file, remove_file, finish."""
    named = {t["function"]["name"]: t for t in TOOL_DEFINITIONS}
    return [named["write_file"], _REMOVE_TOOL, named["finish"]]


_SYSTEM = """\
You write the files of a training task (Harbor format) for a terminal agent. Nothing runs while you write:
you cannot run commands, read files or test anything here. Each reply's files are judged by the harness in
separate sandboxes (validation, then calibration with the current solver) and the verdict comes back to you."""

_TOOLS = """\
Use the tools: `write_file` (the complete content of one file; `encoding: "base64"` for bytes that are not
UTF-8 text), `remove_file` (a file of the task you no longer want) and `finish` when the task is written."""

_TEXT = """\
Act with fenced blocks. A file of the task:

```write_file <path>
<the complete content of the file; each line ends with a newline>
```

A file to remove: a ```run block holding only `rm <path>` (the only command honoured; nothing else runs).
End with a ```finish block. Text outside blocks is for your reasoning."""


def author_system(*, tools: bool) -> str:
    """The system prompt of the written methods, in tool mode or in the text format."""
    return f"{_SYSTEM}\n\n{_TOOLS if tools else _TEXT}\n"


class AuthorPolicy(OpenAIPolicy):
    """The OpenAI policy with the written methods' tools and system prompt (its retries, text fallback and token
    records are the solver's own)."""

    @property
    def tool_definitions(self) -> list[dict[str, Any]] | None:
        return author_tools() if self._tools_on else None

    def system_prompt(self) -> str:
        return author_system(tools=self._tools_on)

    def _params(self, conversation: Any, turn_index: int) -> dict[str, Any]:
        params = super()._params(conversation, turn_index)
        if "tools" in params:
            params["tools"] = author_tools()
        return params

    def _reply(self, raw: Any, turn_index: int) -> PolicyReply:
        """The solver's parsing, with ``remove_file`` (no terminal action) taken as the valid call it is here."""
        reply = super()._reply(raw, turn_index)
        calls = [c.model_copy(update={"error": None}) if c.name == REMOVE_FILE else c for c in reply.calls]
        errors = [f"tool call {c.name}: {c.error}" for c in calls if c.error]
        return reply.model_copy(update={"calls": calls, "invalid": errors[0] if errors else None})


def removed_path(call: Call) -> str | None:
    """The path a call removes: a ``remove_file`` call, or (text format) a ``run`` of ``rm <path>``."""
    if call.name == REMOVE_FILE:
        path = (call.arguments or {}).get("path")
        return str(path) if path else None
    return None


def observation(call: Call) -> str:
    """What the harness answers one call of a written reply with."""
    action = call.action
    if call.name == REMOVE_FILE:
        return f"Removed {removed_path(call) or '(no path given)'}."
    if isinstance(action, WriteFileAction):
        return f"Wrote {len(action.data())} bytes to {action.path}."
    if isinstance(action, FinishAction):
        return "Finished."
    if isinstance(action, RunAction) and action.command.strip().startswith("rm "):
        return "Removed."
    return "Not run: in this method the task is only written; only write_file, remove_file and finish are honoured."

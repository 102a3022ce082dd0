"""The four things a policy can do, and how a reply is turned into them.

Tool-calling models get :data:`TOOL_DEFINITIONS` (OpenAI function schema) and
their calls are validated with :func:`action_from_tool_call`. Models served
without tool calling (vLLM without a tool parser, base models, small local
models) reply in plain text instead; :data:`TEXT_FORMAT_HELP` is the contract
put into their system prompt and :func:`parse_text_actions` its parser. The
parser also accepts the JSON and ``<tool_call>`` shapes models commonly fall
back to, so that a usable reply is not thrown away over formatting.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator


class InvalidActionError(ValueError):
    """A reply, or one call in it, that cannot be turned into an action."""


class _ActionBase(BaseModel):
    # Models often add a "reason" or "thought" field to a call; that is not an error.
    model_config = ConfigDict(extra="ignore")


class RunAction(_ActionBase):
    """Run a shell command (``bash -c``) in the task's working directory."""

    kind: Literal["run"] = "run"
    command: str = Field(min_length=1)
    timeout_sec: float | None = Field(default=None, gt=0)


class ReadFileAction(_ActionBase):
    kind: Literal["read_file"] = "read_file"
    path: str = Field(min_length=1)


class WriteFileAction(_ActionBase):
    """Replace a file's whole content (parent folders are created).

    ``content`` is text, written as UTF-8 byte for byte (CR, NUL and non-ASCII as given). Bytes that are not
    UTF-8 (a latin-1 log, a binary fixture) cannot travel in a JSON string, so ``encoding="base64"`` says
    ``content`` is their base64 and :meth:`data` decodes it; a bad base64 is refused when the call is read.
    """

    kind: Literal["write_file"] = "write_file"
    path: str = Field(min_length=1)
    content: str
    encoding: Literal["utf-8", "base64"] | None = Field(default=None, description="None or utf-8: text; base64: bytes")

    @model_validator(mode="after")
    def _decodes(self) -> WriteFileAction:
        if self.encoding == "base64":
            self.data()  # a content that is not base64 is an invalid call, said to the model, never a crash later
        return self

    def data(self) -> bytes:
        """The exact bytes to write."""
        if self.encoding == "base64":
            try:
                return base64.b64decode("".join(self.content.split()), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(f"content is not valid base64 ({exc})") from None
        return self.content.encode("utf-8", "surrogatepass")


class FinishAction(_ActionBase):
    kind: Literal["finish"] = "finish"
    message: str = ""


Action = Annotated[RunAction | ReadFileAction | WriteFileAction | FinishAction, Field(discriminator="kind")]
ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)

#: Tool names as the model sees them -> action kind.
TOOL_NAMES = {"run": "run", "read_file": "read_file", "write_file": "write_file", "finish": "finish"}


def _tool(name: str, description: str, required: list[str], **parameters: tuple[str, str]) -> dict[str, Any]:
    """An OpenAI function tool; ``parameters`` maps each argument to (JSON type, description)."""
    properties = {arg: {"type": kind, "description": text} for arg, (kind, text) in parameters.items()}
    schema = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


_PATH = ("string", "Absolute path, or relative to the working directory.")

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _tool(
        "run",
        "Run a shell command with bash in the task's working directory and get its combined "
        "stdout/stderr and exit code. Each call starts a fresh shell: cd and exported variables "
        "do not carry over, so chain dependent commands with &&.",
        ["command"],
        command=("string", "The bash command line to run."),
        timeout_sec=("number", "Optional time limit in seconds."),
    ),
    _tool("read_file", "Read a text file (long files are shortened in the middle).", ["path"], path=_PATH),
    _tool(
        "write_file",
        "Create or overwrite a file with exactly the given content; missing parent folders are created.",
        ["path", "content"],
        path=_PATH,
        content=("string", "The complete new content of the file."),
        encoding=(
            "string",
            'Optional: "base64" when content is the base64 of the file\'s bytes (for bytes that are not UTF-8 '
            "text); otherwise content is written as UTF-8 exactly as given (CR, NUL and non-ASCII kept).",
        ),
    ),
    _tool(
        "finish",
        "Declare the task complete (or abandoned). Nothing runs after this.",
        [],
        message=("string", "A one-line summary of what was done."),
    ),
]

TEXT_FORMAT_HELP = """\
Act by putting one or more action blocks in your reply. An action block is a
fenced block whose info string names the action:

```run
<a bash command line; it runs in the working directory>
```

```read_file <path>
```

```write_file <path>
<the complete new content of the file>
```

```finish
<optional one-line summary>
```

The blocks run in order, and you then see their output. Text outside blocks
is for your reasoning and is not executed. Each `run` block starts a fresh
shell: `cd` and exported variables do not carry over, so chain dependent
commands with `&&`. A `write_file` block writes its lines, each ending with a
newline. If the content itself contains a line of three backticks, fence the
block with four or more backticks instead. Instead of blocks you may also
reply with one JSON object (or a list of them) such as
{"action": "run", "command": "ls -la"}, {"action": "write_file", "path": "a.txt", "content": "..."}
or {"action": "finish", "message": "..."}.
Reply with `finish` only once the task is done."""

_RUN_WORDS = {"run", "bash", "sh", "shell", "console", "terminal"}
_READ_WORDS = {"read_file", "read"}
_WRITE_WORDS = {"write_file", "write"}
_FINISH_WORDS = {"finish", "done", "submit"}
_JSON_WORDS = {"json"}

_FENCE_OPEN = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<word>[A-Za-z_][\w-]*)?[ \t]*(?P<rest>[^\n]*)$"
)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def action_from_dict(data: dict[str, Any]) -> Any:
    """Validate one action given as ``{"action"|"kind": name, ...fields}``."""
    data = dict(data)
    name = data.pop("action", None) or data.pop("kind", None)
    if name is None:
        raise InvalidActionError(f"action object without an 'action' field: {json.dumps(data)[:200]}")
    kind = TOOL_NAMES.get(str(name))
    if kind is None:
        raise InvalidActionError(f"unknown action {name!r}; use one of: {', '.join(TOOL_NAMES)}")
    try:
        return ACTION_ADAPTER.validate_python({"kind": kind, **data})
    except ValidationError as exc:
        raise InvalidActionError(f"bad arguments for {name}: {_brief(exc)}") from None


def action_from_tool_call(name: str, arguments: str | dict[str, Any] | None) -> Any:
    """Validate one OpenAI tool call (``arguments`` as the JSON string the API returns)."""
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidActionError(f"arguments of {name} are not valid JSON ({exc.msg} at char {exc.pos})") from None
    else:
        args = dict(arguments or {})
    if not isinstance(args, dict):
        raise InvalidActionError(f"arguments of {name} must be a JSON object")
    return action_from_dict({"action": name, **args})


def action_to_tool_call(action: Any) -> tuple[str, dict[str, Any]]:
    """The (function name, arguments) an action is recorded as in a trajectory."""
    data = action.model_dump(exclude_none=True)
    return data.pop("kind"), data


def parse_text_actions(text: str) -> list[Any]:
    """Actions in a plain-text reply, in order; raises :class:`InvalidActionError` if there are none."""
    actions = _parse_blocks(text)
    if actions:
        return actions
    for body in _TOOL_CALL_TAG.findall(text):
        actions.extend(_parse_json_actions(body, allow_tool_shape=True))
    if actions:
        return actions
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return _parse_json_actions(stripped, allow_tool_shape=True)
    raise InvalidActionError(
        "the reply contains no action: expected a ```run, ```read_file, ```write_file or ```finish block "
        "(or a JSON action object)"
    )


def _parse_blocks(text: str) -> list[Any]:
    lines = text.split("\n")
    actions: list[Any] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, word, rest = m["fence"], (m["word"] or "").lower(), m["rest"].strip()
        close = re.compile(rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body_lines = lines[i + 1 : j]
        closed = j < len(lines)
        known = word in _RUN_WORDS | _READ_WORDS | _WRITE_WORDS | _FINISH_WORDS | _JSON_WORDS
        if known and not closed:
            raise InvalidActionError(f"the ```{word} block is not closed (was the reply cut off?)")
        i = j + 1
        if not known:
            continue
        body = "\n".join(body_lines)
        if word in _RUN_WORDS:
            if not body.strip():
                raise InvalidActionError(f"empty ```{word} block")
            actions.append(RunAction(command=body))
        elif word in _READ_WORDS:
            path = rest or body.strip()
            if not path:
                raise InvalidActionError("```read_file needs a path after the word read_file")
            actions.append(ReadFileAction(path=path))
        elif word in _WRITE_WORDS:
            if not rest:
                raise InvalidActionError("```write_file needs a path after the word write_file")
            actions.append(WriteFileAction(path=rest, content=body + "\n" if body_lines else ""))
        elif word in _FINISH_WORDS:
            actions.append(FinishAction(message=(rest + " " + body).strip()))
        else:
            actions.extend(_parse_json_actions(body, allow_tool_shape=True))
    return actions


def _parse_json_actions(body: str, *, allow_tool_shape: bool) -> list[Any]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidActionError(f"the JSON action is not valid JSON ({exc.msg} at char {exc.pos})") from None
    items = data if isinstance(data, list) else [data]
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise InvalidActionError("a JSON action must be an object")
        if allow_tool_shape and "name" in item and "action" not in item:
            out.append(action_from_tool_call(str(item["name"]), item.get("arguments") or {}))
        else:
            out.append(action_from_dict(item))
    return out


def _brief(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"][1:] or err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


class ActionResult(BaseModel):
    """What one executed (or refused) call produced, as shown to the policy."""

    call_id: str
    action: Action | None = None
    output: str
    exit_code: int | None = None
    error: str | None = None
    duration_sec: float | None = None
    truncated: bool = False

"""Classify proposer actions as Read, Build, Write or Test, so a design's course can be plotted.

- Read: taking information in (the seed case, skills, memory, files, feedback);
- Write: authoring task files (write_file, heredocs, editors);
- Build: making things the task needs without authoring them by hand (folders,
  permissions, generated data, hashes, running generators);
- Test: checking the task (static checks, validation and solver rollouts in
  child sandboxes, running its tests or solution).

The same rules serve the three methods: prompt/feedback log their steps
directly, the agentic method's tool calls are classified from its trajectory.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any

from autoenv.proposer.models import ActionKind, ProposerAction

#: Commands that make or change things (anything else that is not a test or a write is reading).
_BUILD_CMDS = {
    "mkdir",
    "chmod",
    "chown",
    "cp",
    "mv",
    "rm",
    "ln",
    "touch",
    "tar",
    "gzip",
    "zip",
    "unzip",
    "sha256sum",
    "md5sum",
    "python",
    "python3",
    "sh",
    "bash",
    "make",
    "pip",
    "pip3",
    "install",
    "truncate",
    "dd",
}
_RUNNERS = {"bash", "sh", "python", "python3", "timeout", "env"}
_TEST_TARGET = re.compile(r"(^|/)(test\.sh|solve\.sh|check_task\.py|test_[\w-]*\.py)$")
_WRITE_SHAPES = re.compile(
    r"(<<-?\s*['\"]?\w+['\"]?|\btee\b|>>?\s*\S+\.(md|py|sh|toml|txt|csv|tsv|json|ini|yaml|yml|fasta)\b|\bsed\s+-i\b)"
)
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_RANK = {"Read": 0, "Build": 1, "Write": 2, "Test": 3}


def _segments(text: str) -> list[list[str]]:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    out: list[list[str]] = [[]]
    for w in words:
        if w in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(w)
    return [seg for seg in out if seg]


def _classify_segment(seg: list[str]) -> ActionKind:
    head = seg[0].rsplit("/", 1)[-1]
    if head == "autoenv-child" or head in ("pytest", "py.test") or "pytest" in seg or "--check" in seg:
        return "Test"
    if _TEST_TARGET.search(seg[0]):
        return "Test"
    if head in _RUNNERS:
        args = [a for a in seg[1:] if not a.startswith("-")]
        if args and _TEST_TARGET.search(args[0]):
            return "Test"
    return "Build" if head in _BUILD_CMDS else "Read"


def classify_command(command: str) -> ActionKind:
    """Read/Build/Write/Test for one shell command line (the strongest signal wins: Test > Write > Build > Read)."""
    text = command.strip()
    kinds: list[ActionKind] = [_classify_segment(seg) for seg in _segments(text)] or ["Read"]
    if _WRITE_SHAPES.search(text):
        kinds.append("Write")
    return max(kinds, key=_RANK.__getitem__)


def classify_tool_call(name: str, arguments: dict[str, Any] | None) -> ActionKind:
    args = arguments or {}
    if name == "read_file":
        return "Read"
    if name == "write_file":
        return "Write"
    if name == "run":
        return classify_command(str(args.get("command", "")))
    if name == "finish":
        return "Read"
    return "Build"


def describe_tool_call(name: str, arguments: dict[str, Any] | None) -> str:
    args = arguments or {}
    if name == "run":
        return f"run: {str(args.get('command', ''))[:200]}"
    if name in ("read_file", "write_file"):
        size = f" ({len(str(args.get('content', '')))} chars)" if name == "write_file" else ""
        return f"{name}: {args.get('path', '')}{size}"
    return f"{name}: {str(args.get('message', ''))[:200]}"


class ActionLog:
    """Timestamped, classified actions of one attempt."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.wall_started = time.time()
        self.actions: list[ProposerAction] = []

    def add(self, kind: ActionKind, detail: str) -> ProposerAction:
        action = ProposerAction(t=round(time.monotonic() - self.started, 3), kind=kind, detail=detail[:500])
        self.actions.append(action)
        return action

    def extend(self, actions: list[ProposerAction]) -> None:
        self.actions.extend(actions)

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

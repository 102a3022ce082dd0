"""Classify proposer actions by what they do, so a design's course can be plotted (the paper's Fig. 8).

- Read: taking information in (cat, head, ls, find, grep, reading a file, the seed case, feedback);
- Write: changing the task's files (write_file, a redirection or ``tee`` into a file, ``sed -i``, mkdir, chmod,
  cp/mv/rm/ln/touch);
- Build: making things the task needs by running programs (building an image, running a generator or a script that
  is not a test, pip, make, archives);
- Test: checking the task (``autoenv-child validate/solve/check``, static checks, pytest, running its tests or
  solution);
- Finish: the proposer says it is done.

A command line is classified by its main effect: each ``&&``/``;``/``|`` segment is classified and the strongest
wins (Test > Build > Write > Read), so ``cd x && autoenv-child validate x`` is Test and
``cat memory/lessons.md && head -n 5 skills/a.md`` is Read. The same rules serve every method: prompt/feedback log
their steps directly, the agentic method's tool calls are classified from its trajectory.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any

from autoenv.proposer.models import ActionKind, ProposerAction

#: Commands that change files in place (the task's, the workspace's).
_WRITE_CMDS = {"mkdir", "chmod", "chown", "cp", "mv", "rm", "rmdir", "ln", "touch", "truncate", "dd", "install", "tee"}
#: Commands that make things by running programs.
_BUILD_CMDS = {"make", "pip", "pip3", "tar", "gzip", "gunzip", "zip", "unzip", "docker", "buildah", "podman", "npm"}
_RUNNERS = {"bash", "sh", "python", "python3", "timeout", "env", "node"}
_TEST_TARGET = re.compile(r"(^|/)(test\.sh|solve\.sh|check_task\.py|test_[\w-]*\.py|[\w-]*_test\.py)$")
_CHILD_TESTS = {"validate", "solve", "check", "test", "trial", "calibrate"}
#: A redirection into a file (not into another descriptor, nor /dev/null); a here-document.
_REDIRECT = re.compile(r"(?<![0-9&<>])>>?\s*(?!&|/dev/)[^\s;&|]+|<<-?\s*['\"]?\w+['\"]?")
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_RANK = {"Read": 0, "Finish": 0, "Write": 1, "Build": 2, "Test": 3}


def _segments(text: str) -> list[list[str]]:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    out: list[list[str]] = [[]]
    for w in words:
        if len(w) > 1 and w.endswith(";"):  # shlex keeps `a;` one word
            out[-1].append(w[:-1])
            out.append([])
        elif w in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(w)
    return [seg for seg in out if seg]


def _classify_segment(seg: list[str]) -> ActionKind:
    head = seg[0].rsplit("/", 1)[-1]
    args = [a for a in seg[1:] if not a.startswith("-")]
    if head == "autoenv-child":
        return "Test" if args and args[0] in _CHILD_TESTS else ("Build" if args and args[0] == "build" else "Read")
    if head in ("pytest", "py.test") or "pytest" in seg or _TEST_TARGET.search(seg[0]):
        return "Test"
    if head in _RUNNERS:
        if args and _TEST_TARGET.search(args[0]):
            return "Test"
        return "Build" if args or "-c" in seg else "Read"  # running a program (a generator, a script)
    if head == "sed" and any(a.startswith("-i") for a in seg[1:]):
        return "Write"
    if head in _WRITE_CMDS:
        return "Write"
    return "Build" if head in _BUILD_CMDS else "Read"


def classify_command(command: str) -> ActionKind:
    """Read/Write/Build/Test for one shell command line, by its main effect (see the module's docstring)."""
    text = command.strip()
    kinds: list[ActionKind] = [_classify_segment(seg) for seg in _segments(text)] or ["Read"]
    if _REDIRECT.search(text):
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
        return "Finish"
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

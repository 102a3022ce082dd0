"""Shortcut cheats: outputs that look right without doing the task, for tests that check only shape.

A careful reviewer's first tries against a task's tests, and what an RL policy finds first: the instruction's own
example output written verbatim where the instruction says the output goes; minimal outputs of the right shape
(the example JSON's keys with zeros, empty lists, ``false``, the first value of an enumeration); an all-positive
report ("VALID", "PASS", ``true``) with the folders the tests iterate over left empty; and the inputs the tests
read emptied (a CSV down to its header) next to minimal outputs, which beats tests that recompute the expected
answer from an input the agent can edit; and a free-text answer (a diagnosis) that names every common cause of
failure at once, which beats tests that grade prose by its words. None of it needs a reference solution, so it runs
for every task.

Each family is one function from the instruction to shell lines (run by :mod:`autoenv.agents.adversary`, which
reports every applied cheat as ``CHEAT kind detail``). They write only outputs that do not exist yet (never the
task's inputs, except ``inputs``, whose point it is), so the families run one trial each: two of them would write
the same path differently.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

#: A fenced code block (its language tag, its text).
_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)```", re.S)
_INLINE = re.compile(r"`([\[{][^`\n]{1,400}[\]}])`")
_PATH = re.compile(r"(?<![\w.~$-])(/(?:[\w.+@-]+/)*[\w.+@-]*)")
_SCRIPTS = {".sh", ".py", ".pl", ".rb", ".js", ".bash"}
_SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "python", "py"}
#: Status words a report may use, negative first to positive (an all-positive report swaps them).
_NEGATIVE = {"INVALID": "VALID", "FAIL": "PASS", "FAILED": "PASSED", "ERROR": "OK", "UNHEALTHY": "HEALTHY"}
_POSITIVE_WORDS = ("VALID", "PASS", "PASSED", "OK", "SUCCESS", "HEALTHY", "CLEAN")
_ENUM = re.compile(r"one of[:\s]+((?:[`\"'][\w.-]+[`\"'](?:\s*[,/|]\s*|\s+or\s+|\s*,\s*or\s+)?){2,})", re.I)
_QUOTED = re.compile(r"[`\"']([\w.-]+)[`\"']")
_SYSTEM = ("/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib", "/var/lib", "/logs", "/boot", "/run")


def _clean(path: str) -> str:
    return path.rstrip(".,;:)]}'\"")


def _is_system(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in _SYSTEM) or path.startswith("/tests")


def output_files(instruction: str) -> list[str]:
    """Absolute file paths the instruction names that could be data outputs (not programs, not folders)."""
    seen: dict[str, None] = {}
    for match in _PATH.finditer(instruction):
        path = _clean(match.group(1))
        name = PurePosixPath(path).name
        if len(path) < 3 or path.endswith("/") or "." not in name or _is_system(path):
            continue
        if PurePosixPath(path).suffix in _SCRIPTS:
            continue
        seen.setdefault(str(PurePosixPath(path)), None)
    return list(seen)


def folders(instruction: str) -> list[str]:
    """Folders the instruction names (a trailing slash, or the word folder/directory next to the path)."""
    seen: dict[str, None] = {}
    for match in _PATH.finditer(instruction):
        raw = match.group(1)
        path = _clean(raw)
        around = instruction[max(0, match.start() - 20) : match.end() + 20].lower()
        named = raw.endswith("/") or (
            "." not in PurePosixPath(path).name and re.search(r"\b(folder|directory|dir)\b", around)
        )
        if named and len(path.rstrip("/")) > 1 and not _is_system(path.rstrip("/")):
            seen.setdefault(path.rstrip("/"), None)
    return list(seen)


def examples(instruction: str) -> dict[str, str]:
    """The instruction's example output for each output file it names: a code block (or an inline JSON value) that
    follows the file's last mention before it."""
    found: dict[str, str] = {}
    blocks = [(m.start(), m.end(), m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(instruction)]
    fenced = [(s, e) for s, e, _, _ in blocks]
    inline = [
        (m.start(), m.end(), "json", m.group(1))
        for m in _INLINE.finditer(instruction)
        if not any(s <= m.start() < e for s, e in fenced)
    ]
    previous = 0
    for start, end, lang, text in sorted(blocks + inline):
        before = instruction[previous:start]
        previous = end
        first = text.strip().splitlines()[0] if text.strip() else ""
        if lang in _SHELL_LANGS or first.startswith(("$ ", "# ")):
            continue
        paths = output_files(before)
        if lang == "json" or _json(text) is not None:
            paths = [p for p in paths if p.endswith(".json")] or paths
        if paths and paths[-1] not in found:
            found[paths[-1]] = text if text.endswith("\n") else text + "\n"
    return found


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def enum_values(instruction: str) -> list[list[str]]:
    """Enumerations the instruction states ("one of `ok`, `warn`, `error`"), each in its order."""
    return [_QUOTED.findall(m.group(1)) for m in _ENUM.finditer(instruction)]


def reshape(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with its keys kept, every list emptied and every other leaf replaced by ``leaf(leaf value)``."""
    if isinstance(value, dict):
        return {k: reshape(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return []
    return leaf(value)


def minimal_leaf(enums: list[list[str]]) -> Callable[[Any], Any]:
    def leaf(value: Any) -> Any:
        if isinstance(value, bool):
            return False
        if isinstance(value, int | float):
            return 0
        if isinstance(value, str):
            return next((e[0] for e in enums if value in e), "")
        return value

    return leaf


def positive_leaf(word: str) -> Callable[[Any], Any]:
    def leaf(value: Any) -> Any:
        if isinstance(value, bool):
            return True
        if isinstance(value, int | float):
            return 0
        if isinstance(value, str) and value.upper() in {*_NEGATIVE, *_NEGATIVE.values()}:
            return _NEGATIVE.get(value.upper(), value.upper()) if value.isupper() else word.lower()
        return value

    return leaf


def positive_word(instruction: str) -> str:
    """The report's own word for success (VALID, PASS, OK, ...), as the instruction spells it; VALID otherwise."""
    for word in _POSITIVE_WORDS:
        if re.search(rf"\b{word}\b", instruction):
            return word
    return "VALID"


def _write(path: str, content: str, kind: str) -> list[str]:
    q = shlex.quote
    return [
        f'if [ ! -e {q(path)} ]; then mkdir -p "$(dirname {q(path)})" 2>/dev/null;',
        f"  printf '%s' {q(content)} > {q(path)} 2>/dev/null && report {kind} {q(path)}; fi",
    ]


def _empty_folders(instruction: str, kind: str = "empty_folder") -> list[str]:
    """Output folders made and left empty (a test looping over their files then checks nothing)."""
    q = shlex.quote
    return [
        f"if [ ! -e {q(d)} ]; then mkdir -p {q(d)} 2>/dev/null && report {kind} {q(d)}; fi"
        for d in folders(instruction)
    ]


def minimal_content(path: str, example: str | None, enums: list[list[str]]) -> str | None:
    """The smallest output of the example's shape: its JSON keys with zero values, a CSV's header alone."""
    suffix = PurePosixPath(path).suffix
    parsed = _json(example) if example is not None else None
    if parsed is not None:
        return json.dumps(reshape(parsed, minimal_leaf(enums)), indent=2) + "\n"
    if suffix == ".json":
        return "{}\n"
    if suffix == ".csv" and example:
        return example.splitlines()[0] + "\n"
    if suffix in (".txt", ".out"):
        return "0\n"
    return None


def example_cheat(instruction: str) -> list[str]:
    """``example``: the instruction's example output, verbatim, at each output path it illustrates."""
    return [line for path, text in examples(instruction).items() for line in _write(path, text, "example_output")]


def minimal_cheat(instruction: str) -> list[str]:
    """``minimal``: outputs of the right shape with nothing in them (zeros, empty lists, false, first enum value)."""
    lines, found, enums = [], examples(instruction), enum_values(instruction)
    for path in output_files(instruction):
        content = minimal_content(path, found.get(path), enums)
        if content is not None:
            lines += _write(path, content, "minimal_output")
    return lines + _empty_folders(instruction)


def positive_cheat(instruction: str) -> list[str]:
    """``positive``: every report says all is well (VALID / PASS / OK, ``true``), the output folders empty."""
    lines, found, word = [], examples(instruction), positive_word(instruction)
    for path in output_files(instruction):
        example = found.get(path)
        parsed = _json(example) if example is not None else None
        if parsed is not None:
            content = json.dumps(reshape(parsed, positive_leaf(word)), indent=2) + "\n"
        elif example is not None:
            content = re.sub(
                r"\b(" + "|".join(_NEGATIVE) + r")\b", lambda m: _NEGATIVE[m.group(1)], example
            )  # the example's lines, every one positive
        elif PurePosixPath(path).suffix == ".json":
            content = json.dumps({"status": word, "valid": True, "errors": []}) + "\n"
        else:
            content = word + "\n"
        lines += _write(path, content, "positive_report")
    return lines + _empty_folders(instruction)


#: Emptying an input: a CSV keeps its header (still parses), JSON becomes an empty list/object, the rest empty.
_EMPTY_INPUT = """\
empty_input() {
  case "$1" in
    *.csv|*.tsv) head -n 1 "$1" > "$1.autoenv" 2>/dev/null && cat "$1.autoenv" > "$1" && rm -f "$1.autoenv" ;;
    *.json) if head -c 64 "$1" | grep -q '^[[:space:]]*\\['; then echo '[]' > "$1"; else echo '{}' > "$1"; fi ;;
    *) : > "$1" ;;
  esac
}"""


def inputs_cheat(instruction: str, inputs: list[str] | tuple[str, ...] = ()) -> list[str]:
    """``inputs``: the inputs the tests may read (files the instruction names that exist, files ``inputs`` names:
    what the tests open, read from them by validation) emptied or cut to their header, the input folders emptied,
    then minimal outputs: tests that recompute the expected answer from an editable input agree with them."""
    q = shlex.quote
    candidates = list(dict.fromkeys([*output_files(instruction), *inputs]))
    lines = [_EMPTY_INPUT] if candidates or folders(instruction) else []
    for path in candidates:
        lines.append(
            f"if [ -f {q(path)} ] && [ -s {q(path)} ]; then empty_input {q(path)} && report emptied_input {q(path)}; fi"
        )
    for folder in folders(instruction):
        lines.append(
            f'if [ -d {q(folder)} ] && [ -n "$(ls -A {q(folder)} 2>/dev/null)" ]; then '
            f"find {q(folder)} -mindepth 1 -delete 2>/dev/null; report emptied_folder {q(folder)}; fi"
        )
    return lines + minimal_cheat(instruction) if lines else []


#: Words a free-text answer is asked for with ("write your diagnosis", "explain why", "the root cause").
_PROSE = re.compile(
    r"\b(diagnos\w*|explain\w*|explanation|describe|root cause|why|in (a few|one|two|three) sentences?)\b", re.I
)
_PROSE_SUFFIXES = {".txt", ".md", ""}
#: The causes of failure a diagnosis names, across kinds of bug: an answer naming them all at once is what a
#: policy writes when the tests look for words rather than for the cause the environment shows.
KEYWORD_SOUP = (
    "The root cause could be any of the following; all are possible and each is addressed by the fix.\n"
    "- race condition: two threads without a lock (mutex, deadlock, concurrency, thread safety, atomic)\n"
    "- division by zero (ZeroDivisionError) on an empty input, an empty file or an empty list\n"
    "- off-by-one error: an index out of range (IndexError), a loop bound, a fencepost\n"
    "- a null / None value (NoneType, null pointer, missing key, KeyError, AttributeError)\n"
    "- a type error (TypeError, ValueError), integer overflow, rounding and floating point precision\n"
    "- encoding: unicode, UTF-8, a byte order mark, line endings (CRLF)\n"
    "- time: a timezone, UTC offset, daylight saving time, a timeout, a sleep, a retry\n"
    "- resources: a memory leak, a file descriptor leak, disk full, out of memory, a zombie process, a signal\n"
    "- configuration: a wrong path, permission denied, an environment variable, a missing dependency, an import "
    "error, a version mismatch, a stale cache\n"
    "- input handling: a regex, escaping, SQL injection, a buffer overflow, an infinite loop, recursion depth\n"
    "- network: a port, DNS, a certificate (TLS/SSL), a connection refused\n"
)


def keywords_cheat(instruction: str) -> list[str]:
    """``keywords``: a free-text answer (a diagnosis, an explanation) that names every common cause at once, for
    tests that grade prose by the words in it."""
    if not _PROSE.search(instruction):
        return []
    lines = []
    for path in output_files(instruction):
        if PurePosixPath(path).suffix in _PROSE_SUFFIXES:
            lines += _write(path, KEYWORD_SOUP, "keyword_soup")
    return lines


#: The shortcut families, each run as its own trial (see the module docstring), by name.
SHORTCUTS: dict[str, Callable[[str], list[str]]] = {
    "example": example_cheat,
    "minimal": minimal_cheat,
    "positive": positive_cheat,
    "inputs": inputs_cheat,
    "keywords": keywords_cheat,
}

#: The kinds each family reports.
SHORTCUT_KINDS: dict[str, str] = {
    "example_output": "example",
    "minimal_output": "minimal",
    "empty_folder": "minimal",
    "positive_report": "positive",
    "emptied_input": "inputs",
    "emptied_folder": "inputs",
    "keyword_soup": "keywords",
}

__all__ = [
    "SHORTCUTS",
    "SHORTCUT_KINDS",
    "example_cheat",
    "examples",
    "folders",
    "inputs_cheat",
    "keywords_cheat",
    "minimal_cheat",
    "output_files",
    "positive_cheat",
]

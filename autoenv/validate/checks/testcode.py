"""The Python a task's tests run, with where each line is: test files, and programs embedded in shell scripts.

Many verifiers are a ``test.sh`` with the checks in a heredoc (``python3 - <<'PY' ... PY``); a static check that
reads only ``tests/*.py`` misses them. Each :class:`PySource` is parsed code plus the file and the line it starts
on, so a finding can name ``tests/test.sh:9`` and a check can rewrite the exact text (``patched``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

#: A heredoc fed to a Python interpreter: ``python3 - <<'PY'``, ``python <<EOF``, ``python3 -u - << "END"``.
_PY_HEREDOC = re.compile(r"\bpython[\d.]*\b[^\n<]*<<-?\s*(['\"]?)(\w+)\1")


@dataclass(frozen=True)
class PySource:
    """One Python program the tests run: ``code`` starts on line ``start`` of ``file`` (relative to the task)."""

    file: str
    start: int
    code: str

    def tree(self) -> ast.Module | None:
        try:
            return ast.parse(self.code)
        except SyntaxError:
            return None

    def line(self, node: ast.AST) -> int:
        """The line of ``node`` in the file."""
        return self.start + getattr(node, "lineno", 1) - 1


def embedded_python(text: str) -> list[tuple[int, str]]:
    """(first line, code) of each Python heredoc in a shell script."""
    lines = text.splitlines()
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        match = _PY_HEREDOC.search(lines[i])
        i += 1
        if match is None or lines[i - 1].lstrip().startswith("#"):
            continue
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == match.group(2)), len(lines))
        found.append((i + 1, "\n".join(lines[i:end]) + "\n"))
        i = end + 1
    return found


def python_sources(task_dir: Path) -> list[PySource]:
    """Every Python program under ``tests/``: the ``.py`` files and the heredocs of the shell scripts."""
    tests = task_dir / "tests"
    found: list[PySource] = []
    for file in sorted(tests.rglob("*")) if tests.is_dir() else []:
        if not file.is_file() or file.stat().st_size > 1_000_000 or "__pycache__" in file.parts:
            continue
        rel = file.relative_to(task_dir).as_posix()
        text = file.read_text(errors="replace")
        if file.suffix == ".py":
            found.append(PySource(rel, 1, text))
        elif file.suffix in (".sh", ".bash") or text.startswith("#!"):
            found += [PySource(rel, start, code) for start, code in embedded_python(text)]
    return found


def patched(task_dir: Path, source: PySource, node: ast.AST, text: str) -> str:
    """The file of ``source`` with the code of ``node`` replaced by ``text`` (one line), for a copy of the task."""
    lines = (task_dir / source.file).read_text(errors="replace").splitlines(keepends=True)
    first, last = source.line(node) - 1, source.start + node.end_lineno - 2  # type: ignore[attr-defined]
    head = lines[first][: node.col_offset]  # type: ignore[attr-defined]
    tail = lines[last][node.end_col_offset :]  # type: ignore[attr-defined]
    return "".join([*lines[:first], head + text + tail, *lines[last + 1 :]])


__all__ = ["PySource", "embedded_python", "patched", "python_sources"]

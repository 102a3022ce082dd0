"""What the task itself says must stay secret: its solution's and tests' lines, and the values the tests
compare outputs with (read from the task's own files, never from the image)."""

from __future__ import annotations

import ast
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

MIN_LINE = 12
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_FINDINGS = 50

#: Lines too common to say anything about where a file came from.
BOILERPLATE = {
    "set -e",
    "set -eu",
    "set -euo pipefail",
    "set -euxo pipefail",
    "set -x",
    "cd /app",
    "mkdir -p /logs/verifier",
    "import os",
    "import sys",
    "import json",
    "import re",
    "from pathlib import Path",
    'if __name__ == "__main__":',
    "if __name__ == '__main__':",
    "import subprocess",
    "import pytest",
    "main()",
    "raise SystemExit(main())",
    "sys.exit(main())",
}

#: Names of test programs too generic to mean "this is the task's test".
GENERIC_NAMES = {
    "test.sh",
    "run.sh",
    "__init__.py",
    "conftest.py",
    "requirements.txt",
    "setup.py",
    "pyproject.toml",
    "Makefile",
    "README.md",
}
ANSWER_NAME = re.compile(r"(expected|answer|golden|truth|label|solution|reference|oracle)", re.I)
ANSWER_VAR = re.compile(r"(expect|answer|truth|gold|reference|correct|want)", re.I)


LeakKind = Literal[
    "solution_in_image",
    "tests_in_image",
    "test_program_in_image",
    "answers_in_image",
    "harbor_dir_in_image",
    "answer_in_instruction",
    "solution_in_instruction",
    "output_in_instruction",
    "expected_value_in_image",
    "expected_output_in_image",
]


class LeakFinding(BaseModel):
    kind: LeakKind
    where: str
    source: str
    detail: str
    #: "warning": the instruction states a small part of what the tests check (a worked example, a self-check
    #: row): worth knowing, but hard-coding it passes almost nothing. Everything else is an error.
    level: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.kind}: {self.where} <- {self.source} ({self.detail})"


def normalize(line: str) -> str:
    return " ".join(line.split())


def is_text(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return False
    try:
        data[:8192].decode("utf-8")
    except UnicodeDecodeError as exc:  # a multibyte char cut at the sample edge is fine
        return exc.start > 8180
    return True


def read_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(8192)
            if not is_text(data):  # a program or an image: not read to its end
                return None
            data += fh.read()
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if is_text(data) else None


def signature(text: str) -> set[str]:
    """Lines that identify a file: long enough, not boilerplate, not a shebang or fence."""
    out = set()
    for raw in text.splitlines():
        line = normalize(raw)
        if len(line) < MIN_LINE or line in BOILERPLATE or line.startswith(("#!", "```")):
            continue
        out.add(line)
    return out


@dataclass
class Source:
    """One secret file of the task (a solution or test file)."""

    rel: str
    role: Literal["solution", "tests"]
    lines: set[str]
    test_program: bool = False
    answers: bool = False


@dataclass
class Secrets:
    """What must not reach the agent, extracted once per task."""

    sources: list[Source] = field(default_factory=list)
    test_program_names: set[str] = field(default_factory=set)
    answer_literals: dict[str, str] = field(default_factory=dict)  # literal text -> tests file it came from
    #: each value the tests compare with, once: its first written form -> (every form, tests file)
    answer_values: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    answer_lines: dict[str, str] = field(default_factory=dict)
    solution_lines: set[str] = field(default_factory=set)
    public_text: str = ""


def _walk_files(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in {"__pycache__", ".autoenv", ".git"})
        for name in sorted(filenames):
            yield Path(dirpath) / name


def texts_under(root: Path, skip: frozenset[str] = frozenset()):
    """(path, text) of every readable text file under ``root`` (none if it is not a folder), but ``skip`` names."""
    if not root.is_dir():
        return
    for path in _walk_files(root):
        if path.name not in skip and (text := read_text(path)) is not None:
            yield path, text


# -- answer literals ----------------------------------------------------------------


#: Integers an instruction states as part of the spec far more often than as a
#: leaked result: HTTP status codes, well-known ports and sizes, years.
SPEC_NUMBERS = (
    set(range(100, 104))
    | set(range(200, 209))
    | set(range(300, 309))
    | set(range(400, 452))
    | set(range(500, 512))
    | {443, 1000, 1024, 2048, 3000, 4096, 5000, 5432, 6379, 8000, 8080, 8443, 8888, 9000, 9090, 10000, 65535, 1000000}
    | set(range(1970, 2101))
)


def _number_is_answer(value: float) -> bool:
    if isinstance(value, bool) or not math.isfinite(value):
        return False
    if float(value).is_integer():
        return abs(value) >= 100 and int(abs(value)) not in SPEC_NUMBERS
    digits = re.sub(r"[^0-9]", "", repr(float(value)).lstrip("-0.").split("e")[0])
    return len(digits) >= 3


def _string_is_answer(value: str) -> bool:
    value = value.strip()
    return len(value) >= 6 and sum(c.isdigit() for c in value) >= 2 and "\n" not in value and not value.startswith("/")


def literal_forms(value: object) -> list[str]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [str(value), f"{value:,}"] if _number_is_answer(value) else []
    if isinstance(value, float):
        if not _number_is_answer(value):
            return []
        if value.is_integer():
            return [str(int(value)), repr(value)]
        return [repr(value)]
    if isinstance(value, str):
        text = value.strip()
        if _string_is_answer(text):
            return [text]
        try:
            number = float(text)
        except ValueError:
            return []
        return [text] if _number_is_answer(number) else []
    return []


def _constants(node: ast.AST) -> list[object]:
    """Constant leaves of an expression: literals, containers of them, approx(x)/float('x')."""
    out: list[object] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, (int, float, str)):
            out.append(sub.value)
        elif (
            isinstance(sub, ast.UnaryOp)
            and isinstance(sub.op, ast.USub)
            and isinstance(sub.operand, ast.Constant)
            and isinstance(sub.operand.value, (int, float))
        ):
            out.append(-sub.operand.value)
    return out


def python_answer_literals(source: str) -> list[object]:
    """Values a Python test compares outputs to with equality (thresholds in < or >= are not answers)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.In, ast.Is)) for op in node.ops):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.Call)):
                    out.extend(_constants(operand))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in {
                "assertEqual",
                "assertAlmostEqual",
                "assertIn",
                "assertListEqual",
                "assertDictEqual",
                "approx",
                "isclose",
            }:
                for arg in node.args:
                    out.extend(_constants(arg))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and ANSWER_VAR.search(t.id) for t in targets) and node.value is not None:
                out.extend(_constants(node.value))
    return out


_SH_COMPARE = re.compile(r"""(?:==?|!=|-eq|-ne)\s+(?:"([^"$`\\]*)"|'([^']*)'|([^\s\]\);|&]+))""")
_SH_GREP = re.compile(r"""\bgrep\s+(?:-[A-Za-z]+\s+)*(?:"([^"$`\\]*)"|'([^']*)'|([^\s;|&-][^\s;|&]*))""")


def shell_answer_literals(source: str) -> list[str]:
    """Values a shell verifier compares outputs to (``= "4821"``, ``-eq 12``, ``grep -q 'x'``)."""
    out: list[str] = []
    for pattern in (_SH_COMPARE, _SH_GREP):
        for match in pattern.finditer(source):
            value = next((g for g in match.groups() if g is not None), "")
            if value and not value.startswith("$"):
                out.append(value)
    return out


# -- building the secrets -----------------------------------------------------------


def task_secrets(task_dir: Path) -> Secrets:
    secrets = Secrets()
    env_dir = task_dir / "environment"
    public = []
    # a RUN echo of the answer in the Dockerfile is exactly what must not hide the leak
    for _path, text in texts_under(env_dir, skip=frozenset({"Dockerfile"})):
        if text:
            public.append(text)
    secrets.public_text = "\n".join(public)

    for path, text in texts_under(task_dir / "solution"):
        lines = signature(text)
        secrets.solution_lines |= lines
        secrets.sources.append(Source(rel=path.relative_to(task_dir).as_posix(), role="solution", lines=lines))

    for path, text in texts_under(task_dir / "tests"):
        rel = path.relative_to(task_dir).as_posix()
        is_code = path.suffix in {".py", ".sh", ".bash", ""} and not ANSWER_NAME.search(path.name)
        answers = not is_code and bool(ANSWER_NAME.search(path.name))
        source = Source(rel=rel, role="tests", lines=signature(text), test_program=is_code, answers=answers)
        secrets.sources.append(source)
        if is_code and path.name not in GENERIC_NAMES:
            secrets.test_program_names.add(path.name)
        literals: list[object] = []
        if path.suffix == ".py":
            literals = python_answer_literals(text)
        elif path.suffix in {".sh", ".bash", ""}:
            literals = list(shell_answer_literals(text))
        elif answers:
            for line in text.splitlines()[1:]:
                line = line.strip()
                if len(line) >= 8 and any(c.isdigit() for c in line):
                    secrets.answer_lines.setdefault(line, rel)
        for value in literals:
            forms = literal_forms(value)
            for form in forms:
                secrets.answer_literals.setdefault(form, rel)
            if forms and not set(forms) & _all_forms(secrets):  # 4821 and 4821.0 are one value
                secrets.answer_values[forms[0]] = (tuple(forms), rel)
    return secrets


def _all_forms(secrets: Secrets) -> set[str]:
    return {form for forms, _ in secrets.answer_values.values() for form in forms}


def token_in(text: str, token: str) -> bool:
    if not token:
        return False
    if token[0].isalnum() and token[-1].isalnum():
        return re.search(rf"(?<![\w.]){re.escape(token)}(?![\w]|\.\d)", text) is not None
    return token in text

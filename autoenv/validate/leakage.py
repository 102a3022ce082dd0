"""Does the agent get to see what it is supposed to produce?

A task leaks when its environment ships the reference solution or the tests
(the agent can copy or game them), or when its instruction already states the
answers the tests expect. Both make a task trivially solvable without the
skill it is meant to train, and an RL policy finds such shortcuts quickly.

Detection is by content, not by guessing intent:

* *image*: every file the Dockerfile added is compared with the task's
  ``solution/`` and ``tests/`` files. A file that contains **all** the
  distinctive lines of one of them is a copy (a starter file that shares most
  lines with a bug-fix solution lacks the fixed lines, so it is not flagged).
  Test programs are also found by name (``test_*.py`` …), anything under
  ``/tests`` or ``/solution`` is flagged outright, and test data files whose
  names say they are answers (``expected*``, ``*labels*`` …) by content.
* *instruction*: the literal values the tests compare outputs against
  (``== 4821``, ``approx(3.1416)``, ``[ "$x" = "4821" ]``, rows of an
  ``expected_*.csv``) must not appear in ``instruction.md``, unless they are
  in the environment's own input files too (then they are data the agent is
  meant to read, not answers). Bare words are not answers: "write hello to
  out.txt" is a specification. Nor may the instruction contain most of the
  solution's code.

On the local backend the image is the built image's root filesystem (mounted read-only by buildah).
Other backends are scanned from inside a started environment by
:class:`ScanAgent`, which tars the usual work directories back to the host.
"""

from __future__ import annotations

import ast
import filecmp
import gzip
import math
import os
import re
import shlex
import tarfile
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal, override

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from num2words import num2words
from pydantic import BaseModel

from autoenv.agents.named import NamedAgent
from autoenv.agents.toolset import run_confined, upload_toolset

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

#: Image paths that are the base system or installed packages, never the task's own files.
SKIP_DIRS = re.compile(
    r"(^|/)(site-packages|dist-packages|__pycache__|node_modules|\.cache|\.npm|\.cargo|\.rustup)(/|$)"
    r"|^(usr/share|usr/lib|usr/include|usr/local/lib/python[\d.]+|usr/local/include|var/lib|var/cache|var/log|proc|sys|dev"
    r"|tmp/\.autoenv-shims)(/|$)"
)

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


def _is_text(data: bytes) -> bool:
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
            if not _is_text(data):  # a program or an image: not read to its end
                return None
            data += fh.read()
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if _is_text(data) else None


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


def _texts(root: Path, skip: frozenset[str] = frozenset()):
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


def _literal_forms(value: object) -> list[str]:
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
    for _path, text in _texts(env_dir, skip=frozenset({"Dockerfile"})):
        if text:
            public.append(text)
    secrets.public_text = "\n".join(public)

    for path, text in _texts(task_dir / "solution"):
        lines = signature(text)
        secrets.solution_lines |= lines
        secrets.sources.append(Source(rel=path.relative_to(task_dir).as_posix(), role="solution", lines=lines))

    for path, text in _texts(task_dir / "tests"):
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
            forms = _literal_forms(value)
            for form in forms:
                secrets.answer_literals.setdefault(form, rel)
            if forms and not set(forms) & _all_forms(secrets):  # 4821 and 4821.0 are one value
                secrets.answer_values[forms[0]] = (tuple(forms), rel)
    return secrets


def _all_forms(secrets: Secrets) -> set[str]:
    return {form for forms, _ in secrets.answer_values.values() for form in forms}


#: Stated values at or above this share of what the tests check make the instruction a leak (an error); below
#: it they are a worked example (a warning): hard-coding them passes a small part of the tests.
LEAK_SHARE = 0.5


def _token_in(text: str, token: str) -> bool:
    if not token:
        return False
    if token[0].isalnum() and token[-1].isalnum():
        return re.search(rf"(?<![\w.]){re.escape(token)}(?![\w]|\.\d)", text) is not None
    return token in text


# -- scanning -----------------------------------------------------------------------


def scan_instruction(task_dir: Path, secrets: Secrets | None = None) -> list[LeakFinding]:
    """Expected answers or most of the solution's code written into instruction.md."""
    secrets = secrets or task_secrets(task_dir)
    path = task_dir / "instruction.md"
    instruction = path.read_text(errors="replace") if path.is_file() else ""
    findings: list[LeakFinding] = []
    # judged by how much of what the tests check the instruction gives away: every value is one check
    stated: list[tuple[str, str, str]] = []  # (what, source, detail)
    for forms, source in secrets.answer_values.values():
        shown = next((f for f in forms if _token_in(instruction, f)), None)
        if shown is not None and not any(_token_in(secrets.public_text, f) for f in forms):
            stated.append((shown, source, f"the tests expect {shown!r} and the instruction states it"))
    for line, source in secrets.answer_lines.items():
        if line in instruction and line not in secrets.public_text:
            stated.append((line, source, f"expected-output row {line[:80]!r} is in the instruction"))
    # what the tests check beyond the inputs (an id the tests match rows by is in the data, not an answer)
    checked = sum(
        not any(_token_in(secrets.public_text, f) for f in forms) for forms, _ in secrets.answer_values.values()
    )
    checked += sum(line not in secrets.public_text for line in secrets.answer_lines)
    if stated:
        share = len(stated) / max(1, checked)
        count = f"{len(stated)} of the {checked} values the tests check"
        if share >= LEAK_SHARE:
            for _what, source, detail in stated:
                findings.append(
                    LeakFinding(
                        kind="answer_in_instruction",
                        where="instruction.md",
                        source=source,
                        detail=f"{detail} ({count} are stated)",
                    )
                )
        else:
            sources = sorted({source for _, source, _ in stated})
            findings.append(
                LeakFinding(
                    kind="answer_in_instruction",
                    where="instruction.md",
                    source=", ".join(sources),
                    detail=f"the instruction states {count} (e.g. {stated[0][0][:60]!r}): a worked example, since "
                    f"hard-coding them passes under {LEAK_SHARE:.0%} of the checks; an error at {LEAK_SHARE:.0%} "
                    "or more",
                    level="warning",
                )
            )
    instruction_lines = {normalize(line) for line in instruction.splitlines()}
    for src in secrets.sources:
        if src.role != "solution" or len(src.lines) < 2:
            continue
        shared = src.lines & instruction_lines
        if len(shared) >= max(2, math.ceil(0.5 * len(src.lines))):
            findings.append(
                LeakFinding(
                    kind="solution_in_instruction",
                    where="instruction.md",
                    source=src.rel,
                    detail=f"{len(shared)}/{len(src.lines)} distinctive lines of the solution, e.g. "
                    f"{sorted(shared)[0][:80]!r}",
                )
            )
    return findings


def _meaningful(value: str) -> bool:
    """Long or numeric enough that finding it in the instruction is not chance ("ok", "0", "yes" are not)."""
    return len(value) >= 6 or (len(value) >= 3 and any(c.isdigit() for c in value))


def _words(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).replace(" and ", " ").split()) + " "


def number_in_words(value: str) -> str | None:
    """``5004`` -> ``five thousand four`` (num2words, "and" and hyphens dropped), for numbers of two words or more."""
    try:
        number = int(value) if re.fullmatch(r"-?\d+", value) else float(value)
    except ValueError:
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return None
    words = _words(num2words(number)).strip()
    return words if len(words.split()) >= 2 else None


def scan_outputs_in_instruction(
    task_dir: Path, outputs: dict[str, str], secrets: Secrets | None = None
) -> list[LeakFinding]:
    """What the reference solution wrote, found in instruction.md: the "example output" that is the answer.

    ``outputs`` maps each file the solution created or changed to its content (from the partial-solution
    trial). A one-value output found verbatim, or most of the distinctive lines of a longer one, is a leak,
    unless the same text is in the environment's own files (then it is data the agent is meant to read).
    Literal values of the tests are only one way to state an answer; this finds it however the tests check.
    """
    secrets = secrets or task_secrets(task_dir)
    path = task_dir / "instruction.md"
    instruction = normalize(path.read_text(errors="replace")) if path.is_file() else ""
    public = normalize(secrets.public_text)
    findings: list[LeakFinding] = []
    for output, content in sorted(outputs.items()):
        lines = [normalize(line) for line in content.splitlines() if normalize(line)]
        if not lines:
            continue
        if len(lines) == 1:
            value = lines[0]
            if _meaningful(value) and _token_in(instruction, value) and not _token_in(public, value):
                findings.append(
                    LeakFinding(
                        kind="output_in_instruction",
                        where="instruction.md",
                        source=output,
                        detail=f"the reference solution writes {value[:80]!r} to {output} and the instruction states "
                        f"it",
                    )
                )
            elif (
                (words := number_in_words(value))
                and f" {words} " in _words(instruction)
                and not _token_in(public, value)
            ):
                findings.append(
                    LeakFinding(
                        kind="output_in_instruction",
                        where="instruction.md",
                        source=output,
                        detail=f"the reference solution writes {value!r} to {output} and the instruction states it in "
                        f"words ({words!r})",
                    )
                )
            continue
        distinct = {line for line in lines if _meaningful(line) and line not in public}
        shown = {line for line in distinct if line in instruction}
        if len(distinct) >= 2 and len(shown) >= max(2, math.ceil(0.5 * len(distinct))):
            findings.append(
                LeakFinding(
                    kind="output_in_instruction",
                    where="instruction.md",
                    source=output,
                    detail=f"{len(shown)}/{len(distinct)} lines the reference solution writes to {output} are in "
                    f"the instruction, e.g. {sorted(shown)[0][:80]!r}",
                )
            )
    return findings


def scan_tree(root: Path, secrets: Secrets, *, skip: re.Pattern[str] | None = SKIP_DIRS) -> list[LeakFinding]:
    """Scan a directory standing for the image's ``/`` (a built layer, or files copied out of a container)."""
    findings: list[LeakFinding] = []
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if skip is not None:
            dirnames[:] = sorted(d for d in dirnames if not skip.search(f"{rel_dir}/{d}".lstrip("/")))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            image_path = "/" + f"{rel_dir}/{name}".lstrip("/")
            if not path.is_file() or path.is_symlink():
                continue  # overlay whiteouts are character devices; links point elsewhere
            top = image_path.split("/")[1]
            if top in {"tests", "solution"}:
                findings.append(
                    LeakFinding(
                        kind="harbor_dir_in_image",
                        where=image_path,
                        source=f"{top}/",
                        detail=f"/{top} is where Harbor puts the "
                        f"{'tests' if top == 'tests' else 'reference solution'}; the agent can read it",
                    )
                )
                continue
            if name in secrets.test_program_names:
                findings.append(
                    LeakFinding(
                        kind="test_program_in_image",
                        where=image_path,
                        source=f"tests/{name}",
                        detail="a file with the name of one of the task's test programs",
                    )
                )
                continue
            text = read_text(path)
            if text is None:
                continue
            lines = {normalize(line) for line in text.splitlines()}
            for src in secrets.sources:
                if len(src.lines) < 2 or (src.role == "tests" and not (src.test_program or src.answers)):
                    continue
                if src.lines <= lines:
                    kind = (
                        "solution_in_image"
                        if src.role == "solution"
                        else ("answers_in_image" if src.answers else "tests_in_image")
                    )
                    findings.append(
                        LeakFinding(
                            kind=kind,
                            where=image_path,
                            source=src.rel,
                            detail=f"contains all {len(src.lines)} distinctive lines of {src.rel}",
                        )
                    )
            if len(findings) >= MAX_FINDINGS:
                return findings
    return findings


# -- expected values anywhere the agent can read --------------------------------------

#: Archives the scan opens (an answer left packed beside the inputs is as readable as one unpacked).
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".gz")
MAX_ARCHIVE_MEMBERS = 500
_MENTION = re.compile(r"[\w./@+-]+")


def _mentions(task_dir: Path) -> set[str]:
    """Paths and names the instruction or the reference solution speaks of: files so named are the task's inputs."""
    words: set[str] = set()
    texts = [read_text(task_dir / "instruction.md") or ""]
    texts += [text for _, text in _texts(task_dir / "solution")]
    for text in texts:
        for word in _MENTION.findall(text):
            word = word.strip(".,;:'\"")
            if len(word) >= 3:
                words.add(word.rstrip("/"))
    return words


def _is_input(image_path: str, mentions: set[str]) -> bool:
    name = PurePosixPath(image_path).name
    if name in mentions or image_path in mentions:
        return True
    return any(m.startswith("/") and len(m) > 1 and image_path.startswith(m + "/") for m in mentions)


def _archive_texts(path: Path):
    """(member name, text) of the text files inside an archive; nothing when it is not one."""
    name = path.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist()[:MAX_ARCHIVE_MEMBERS]:
                    if not info.is_dir() and info.file_size <= MAX_FILE_BYTES:
                        data = zf.read(info)
                        if _is_text(data):
                            yield info.filename, data.decode("utf-8", errors="replace")
        elif name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
            with tarfile.open(path) as tf:
                for n, member in enumerate(tf):
                    if n >= MAX_ARCHIVE_MEMBERS:
                        break
                    if member.isfile() and member.size <= MAX_FILE_BYTES and (fh := tf.extractfile(member)):
                        data = fh.read()
                        if _is_text(data):
                            yield member.name, data.decode("utf-8", errors="replace")
        elif name.endswith(".gz"):
            with gzip.open(path) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
            if len(data) <= MAX_FILE_BYTES and _is_text(data):
                yield path.name[:-3], data.decode("utf-8", errors="replace")
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError):
        return


def _base_twin(path: Path, base: Path | None, rel: str) -> Path | None:
    """The base image's file at the same place when it looks unchanged (same size and mtime), else None.

    Size and mtime only say where to look: a Dockerfile can give a file of its own both (``touch -r``), so the
    caller compares the content too before calling the file the base system's.
    """
    if base is None:
        return None
    twin = base / rel
    try:
        mine, theirs = path.stat(), twin.lstat()
    except OSError:
        return None
    return twin if mine.st_size == theirs.st_size and mine.st_mtime_ns == theirs.st_mtime_ns else None


def _readable_texts(root: Path, skip: re.Pattern[str] | None, base: Path | None = None):
    """(image path, text) of every text file under ``root`` (the image's ``/``), archive members included; files
    the base image ``base`` (its root, when known) holds with the same content are the base system's, not the
    task's."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if skip is not None:
            dirnames[:] = sorted(d for d in dirnames if not skip.search(f"{rel_dir}/{d}".lstrip("/")))
        if rel_dir.split("/")[0] in {"tests", "solution"}:
            continue  # reported whole by scan_tree
        for name in sorted(filenames):
            path = Path(dirpath) / name
            image_path = "/" + f"{rel_dir}/{name}".lstrip("/")
            if not path.is_file() or path.is_symlink():
                continue
            twin = _base_twin(path, base, image_path.lstrip("/"))
            if name.lower().endswith(ARCHIVE_SUFFIXES):
                if twin is not None and filecmp.cmp(path, twin, shallow=False):
                    continue
                for member, text in _archive_texts(path):
                    yield f"{image_path}!{member}", text
            elif (text := read_text(path)) is not None and (twin is None or read_text(twin) != text):
                yield image_path, text


def _output_lines(content: str) -> set[str]:
    return {
        line
        for line in (normalize(raw) for raw in content.splitlines())
        if len(line) >= 8 and (any(c.isdigit() for c in line) or len(line) >= 16)
    }


def scan_expected_values(
    root: Path,
    task_dir: Path,
    secrets: Secrets,
    outputs: dict[str, str] | None = None,
    *,
    skip: re.Pattern[str] | None = SKIP_DIRS,
    base: Path | None = None,
) -> list[LeakFinding]:
    """The values the tests compare with, and what the reference solution wrote, in any file the agent can read.

    ``base``: the root of the image the Dockerfile starts from; its files, unchanged, are not the task's (a
    number in the base system's headers is chance, not a leak).

    ``root`` stands for the image's ``/``: every text file outside the base system's package folders is read,
    dot-folders and archive members included, whatever its name. A value that also occurs in one of the task's
    inputs (a file the instruction or the solution names, or a file under a folder they name) is data the agent
    is meant to read, not a leak. ``outputs`` (from the partial-solution trial) maps each file the solution wrote
    to its text: a one-value output is looked for like a test literal; of a longer one, the lines that were not
    in the image's own copy of that file, most of them in one file being a copy of the expected output.
    """
    mentions = _mentions(task_dir)
    # each value once, with every form it is written in (4821, 4,821): a value any form of which is in the
    # inputs is data; the others are looked for in their plain form (a thousands separator is chance in code)
    values: dict[str, tuple[tuple[str, ...], str, str]] = {
        forms[0]: (forms, src, "the tests expect it") for forms, src in secrets.answer_values.values()
    }
    copies: dict[str, set[str]] = {}
    for output, content in (outputs or {}).items():
        lines = [normalize(line) for line in content.splitlines() if normalize(line)]
        if len(lines) == 1 and (forms := tuple(_literal_forms(lines[0]))):
            values.setdefault(forms[0], (forms, output, "the reference solution writes it"))
        elif len(lines) > 1:
            before = read_text(Path(root) / output.lstrip("/")) or ""
            new = _output_lines(content) - _output_lines(before)
            if len(new) >= 2:
                copies[output] = new
    if not values and not copies:
        return []
    files = list(_readable_texts(Path(root), skip, base))
    inputs = [text for where, text in files if _is_input(where.split("!")[0], mentions)]
    given = "\n".join(inputs)
    values = {v: entry for v, entry in values.items() if not any(_token_in(given, f) for f in entry[0])}
    given_lines = {normalize(line) for line in given.splitlines()}
    findings: list[LeakFinding] = []
    for where, text in files:
        if _is_input(where.split("!")[0], mentions):
            continue
        for value, (_forms, source, why) in values.items():
            if _token_in(text, value):
                lineno = next((i for i, ln in enumerate(text.splitlines(), 1) if _token_in(ln, value)), 0)
                findings.append(
                    LeakFinding(
                        kind="expected_value_in_image",
                        where=f"{where}:{lineno}",
                        source=source,
                        detail=f"{value!r} is in a file the agent can read and {why}",
                    )
                )
        lines = {normalize(line) for line in text.splitlines()}
        for output, new in copies.items():
            if where == output:
                continue
            hit = (new & lines) - given_lines
            if len(hit) >= max(2, math.ceil(0.5 * len(new))):
                findings.append(
                    LeakFinding(
                        kind="expected_output_in_image",
                        where=where,
                        source=output,
                        detail=f"{len(hit)}/{len(new)} lines the reference solution writes to {output} are in it, "
                        f"e.g. {sorted(hit)[0][:80]!r}",
                    )
                )
        if len(findings) >= MAX_FINDINGS:
            break
    return findings


# -- scanning other backends from inside ----------------------------------------------

SCAN_ROOTS = (
    "/app",
    "/root",
    "/home",
    "/opt",
    "/srv",
    "/workspace",
    "/data",
    "/tests",
    "/solution",
    "/usr/local/bin",
    "/var/www",
    "/tmp",
)
SCAN_ARCHIVE = "/tmp/.autoenv-leak-scan.tgz"


class ScanAgent(NamedAgent, BaseAgent):
    """Copies the environment's work directories back to the host for :func:`scan_tree`.

    Used on backends where autoenv cannot read the built image directly
    (docker, modal, ...). It runs in the agent phase, so it sees exactly what
    an agent would, before the verifier uploads the tests. Files over 2 MB,
    hidden and package directories are left out, at most 20000 files.
    ``roots`` (comma-separated) replaces the default directories.
    """

    AGENT_NAME = "autoenv-leak-scan"

    def __init__(self, *args, roots: str | list[str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        items = roots.split(",") if isinstance(roots, str) else (roots or SCAN_ROOTS)
        self.roots = [r.strip() for r in items if r.strip().startswith("/")]

    @override
    async def setup(self, environment: BaseEnvironment) -> None:
        return

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        roots = " ".join(shlex.quote(r) for r in self.roots)
        # validation's busybox, never the image's find/tar (see autoenv.agents.toolset); dot-folders are read
        # (an answer cached in /app/.meta is a leak); busybox tar takes no file list, so the files travel
        # through a cpio copy into a staging folder that is then packed whole
        tools = await upload_toolset(environment)
        stage = f"/tmp/.autoenv-scan-{uuid.uuid4().hex}"
        script = (
            f'cd / && for d in {roots}; do [ -e "$d" ] && echo "$d"; done > {stage}.roots; '
            f"find $(cat {stage}.roots) -xdev -type d \\( -name '.autoenv-*' -o -name site-packages -o -name "
            "dist-packages -o -name node_modules -o -name __pycache__ -o -name .git -o -path '*/lib/python*' \\) "
            f"-prune -o -type f -size -{MAX_FILE_BYTES // 1024}k ! -name '.autoenv-*' ! -name 'busybox-autoenv-*' "
            f"-print 2>/dev/null | head -n 20000 | sed 's,^/,,' > {stage}.list; mkdir -p {stage}; "
            f"cpio -o -H newc < {stage}.list 2>/dev/null | (cd {stage} && cpio -idm 2>/dev/null); "
            f"tar -czf {SCAN_ARCHIVE} -C {stage} . && rm -rf {stage} {stage}.list {stage}.roots; ls -l {SCAN_ARCHIVE}"
        )
        result = await run_confined(environment, script, tools, timeout_sec=300)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        target = self.logs_dir / "scan.tgz"
        await environment.download_file(SCAN_ARCHIVE, target)
        extracted = self.logs_dir / "fs"
        with tarfile.open(target) as tf:
            tf.extractall(extracted, filter="data")
        (self.logs_dir / "scan.log").write_text(result.stdout + result.stderr)
        context.metadata = {"n_turns": 1}


def scan_extracted(trial_dir: Path, secrets: Secrets) -> list[LeakFinding]:
    """Findings from a :class:`ScanAgent` trial's copy of the environment."""
    root = extracted_root(trial_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: the leak-scan agent copied nothing back")
    return scan_tree(root, secrets, skip=EXTRACTED_SKIP)


#: What a :class:`ScanAgent` copy leaves out already; the rest of it is the agent's view.
EXTRACTED_SKIP = re.compile(r"(^|/)(__pycache__|site-packages|dist-packages)(/|$)")


def extracted_root(trial_dir: Path) -> Path:
    """Where a :class:`ScanAgent` trial put its copy of the environment (standing for the image's ``/``)."""
    return Path(trial_dir) / "agent" / "fs"


__all__ = [
    "LeakFinding",
    "Secrets",
    "ScanAgent",
    "scan_expected_values",
    "EXTRACTED_SKIP",
    "extracted_root",
    "scan_extracted",
    "scan_instruction",
    "scan_tree",
    "task_secrets",
]

"""What the office/web task families share: task skeleton files and reproducible office files.

Every family writes a complete Harbor task: ``instruction.md``, ``task.toml``,
``environment/Dockerfile`` + ``environment/app/``, ``solution/solve.sh`` (+
``solve.py``), ``tests/test.sh`` + ``tests/test_outputs.py``. The verifier
script is the same for all: pytest on the task's own test files only, run
from a fresh folder with ``python3 -I`` so nothing the agent put in ``/app`` (a
``pytest.py``, an ``openpyxl/`` package) shadows the real modules, in a fresh
sandbox (Harbor's separate verifier mode, with ``/app`` collected from the
agent's).

Office files are written reproducibly: the same rng gives the same bytes
(fixed zip timestamps and document properties), so a task's content hash only
changes when its content does.
"""

from __future__ import annotations

import ast
import io
import json
import pprint
import re
import shutil
import textwrap
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

#: Packages the verifiers import, pinned to releases that support Python 3.11 and 3.12.
PYTEST_PIN = "pytest==8.3.4"
OPENPYXL_PIN = "openpyxl==3.1.5"
DOCX_PIN = "python-docx==1.1.2"

FIXED_TIMESTAMP = "2024-01-01T00:00:00Z"
FORMULA_EVAL_PATH = Path(__file__).with_name("formula_eval.py")
CASE_MARKER = "CASE: dict = {}  # filled in by the generator"


def write(path: Path, content: str | bytes, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    if executable:
        path.chmod(0o755)


def write_program_solution(task_dir: Path, program: str, deliverable: str) -> None:
    """The reference solution of a task whose deliverable is a program: ``solution/<name>`` holds it, and
    ``solve.sh`` installs it at ``deliverable`` (the path the tests run) and runs it once on the shipped inputs."""
    name = PurePosixPath(deliverable).name
    write(task_dir / "solution" / name, program)
    write(
        task_dir / "solution" / "solve.sh",
        f'#!/bin/bash\nset -euo pipefail\ncp "$(dirname "$0")/{name}" {deliverable}\npython3 {deliverable}\n',
        executable=True,
    )


def reflow(markdown: str, width: int = 76) -> str:
    """Re-wrap the prose paragraphs and list items of an instruction after placeholders were filled in."""
    out = []
    for block in markdown.strip("\n").split("\n\n"):
        lines = block.split("\n")
        if lines[0].startswith(("#", "```", "|", "    ")):
            out.append(block)
            continue
        items: list[list[str]] = []
        for line in lines:
            if re.match(r"^\s*(\d+\.|-|\*)\s", line) or not items:
                items.append([line])
            else:
                items[-1].append(line.strip())
        wrapped = []
        for item in items:
            first = item[0]
            m = re.match(r"^(\s*(?:(?:\d+\.|-|\*)\s+)?)", first)
            lead = m.group(1)
            text = " ".join([first[len(lead) :].strip(), *item[1:]]).strip()
            text = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", "\x00"), text)  # never break inside code
            filled = textwrap.fill(
                text,
                width=width,
                initial_indent=lead,
                subsequent_indent=" " * len(lead),
                break_long_words=False,
                break_on_hyphens=False,
            )
            wrapped.append(filled.replace("\x00", " "))
        out.append("\n".join(wrapped))
    return "\n\n".join(out) + "\n"


def dockerfile(*packages: str, apt: tuple[str, ...] = ()) -> str:
    """python:3.12-slim with pytest and ``packages`` from PyPI and ``apt`` Debian packages."""
    apt_line = (
        f"RUN apt-get update && apt-get install -y --no-install-recommends {' '.join(apt)} && rm -rf "
        f"/var/lib/apt/lists/*\n"
        if apt
        else ""
    )
    return (
        "FROM python:3.12-slim\n" + apt_line + f"RUN pip install --no-cache-dir {' '.join((PYTEST_PIN, *packages))}\n"
        "WORKDIR /app\n"
        "COPY app/ /app/\n"
    )


def test_sh(*support: str, unprivileged: bool = False) -> str:
    """tests/test.sh: the hardened runner of every template family (templates/base.py).

    Document tests parse files and run none of the agent's code, so pytest stays root (LibreOffice needs a
    writable home); the web app's tests start the app the agent worked in, so they run as nobody.
    """
    from autoenv.families.base import pytest_test_sh

    return pytest_test_sh(*support, unprivileged=unprivileged)


def solve_sh(script: str = "solve.py") -> str:
    return f'#!/bin/bash\nset -euo pipefail\npython3 "$(dirname "$0")/{script}"\n'


#: A line of a shipped file that stands for functions of another file beside it: ``# borrowed from F: f, g``.
BORROWED = re.compile(r"^# borrowed from ([\w.]+): ([\w, ]+)\n", re.M)


def with_borrowed(path: Path) -> str:
    """The text of the shipped file ``path`` with each ``# borrowed from F: f, g`` line replaced by the functions
    ``f`` and ``g`` of the file ``F`` beside it, as written there. A file shipped into a task can import neither
    autoenv nor its sibling (a level's program runs alone in the agent's sandbox), so a function two of them need
    is written once and copied in when the task is written, not kept twice by hand."""

    def lend(match: re.Match[str]) -> str:
        lender = path.with_name(match.group(1))
        source = lender.read_text()
        defs = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
        names = [name.strip() for name in match.group(2).split(",") if name.strip()]
        missing = [name for name in names if name not in defs]
        if missing:  # pragma: no cover - template bug
            raise RuntimeError(f"{path}: {lender.name} has no function {', '.join(missing)}")
        return "\n\n\n".join(ast.get_source_segment(source, defs[name]) for name in names) + "\n"

    return BORROWED.sub(lend, path.read_text())


def verifier_source(path: Path, case: dict[str, Any]) -> str:
    """A verifier template (a real file in the family's ``files/``, functions borrowed from its siblings copied in)
    with the task's constants in place of CASE_MARKER."""
    source = with_borrowed(path)
    if CASE_MARKER not in source:  # pragma: no cover - template bug
        raise RuntimeError(f"{path} lacks the line {CASE_MARKER!r}")
    prefix = "CASE: dict = "
    literal = pprint.pformat(case, width=110 - len(prefix), sort_dicts=True).replace("\n", "\n" + " " * len(prefix))
    return source.replace(CASE_MARKER, prefix + literal, 1)


def solution_source(path: Path, case: dict[str, Any]) -> str:
    """The same substitution for reference solutions (they know the task's targets, like a person reading it would)."""
    return verifier_source(path, case)


# -- reproducible office files ----------------------------------------------------------

_CORE_TIMES = re.compile(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)")


def reproducible_zip(data: bytes) -> bytes:
    """Rewrite an OOXML zip with fixed timestamps (entries and docProps/core.xml)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            content = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = _CORE_TIMES.sub(rb"\g<1>" + FIXED_TIMESTAMP.encode() + rb"\g<3>", content)
            entry = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            dst.writestr(entry, content)
    return out.getvalue()


def save_workbook(wb, path: Path) -> None:
    buf = io.BytesIO()
    wb.save(buf)
    write(path, reproducible_zip(buf.getvalue()))


def save_document(doc, path: Path) -> None:
    buf = io.BytesIO()
    doc.save(buf)
    write(path, reproducible_zip(buf.getvalue()))


def new_document():
    """A python-docx Document with fixed core properties."""
    import datetime

    import docx

    doc = docx.Document()
    props = doc.core_properties
    props.author = "autoenv"
    props.last_modified_by = "autoenv"
    props.revision = 1
    props.created = props.modified = datetime.datetime(2024, 1, 1)
    return doc


def new_workbook():
    import datetime

    import openpyxl

    wb = openpyxl.Workbook()
    wb.properties.creator = "autoenv"
    wb.properties.created = wb.properties.modified = datetime.datetime(2024, 1, 1)
    return wb


def flat(instruction: str) -> str:
    """The instruction on one line, so recipes' patterns do not depend on where it was wrapped."""
    return " ".join(instruction.split())


def write_task_toml(task_dir: Path, template: Path, seed_case: Any) -> None:
    """The family's task.toml (a real file in its ``files/``, naming the family), with the seed case it was
    written from added under the family."""
    text = template.read_text()
    if seed_case is not None:
        text = re.sub(
            r'^(family = ".*"\n)', lambda m: m.group(1) + f"seed_case = {json.dumps(seed_case.id)}\n", text, flags=re.M
        )
    write(task_dir / "task.toml", text)


def write_python_solution(task_dir: Path, source: Path, case: dict[str, Any]) -> None:
    """solution/solve.sh running solution/solve.py: ``source`` with the task's constants."""
    write(task_dir / "solution" / "solve.sh", solve_sh(), executable=True)
    write(task_dir / "solution" / "solve.py", solution_source(source, case))


def write_tests(task_dir: Path, source: Path, case: dict[str, Any], *support: Path, unprivileged: bool = False) -> None:
    """tests/test.sh, tests/test_outputs.py (``source`` with the task's constants) and the helper modules it imports."""
    write(
        task_dir / "tests" / "test.sh", test_sh(*(p.name for p in support), unprivileged=unprivileged), executable=True
    )
    write(task_dir / "tests" / "test_outputs.py", verifier_source(source, case))
    if unprivileged:  # the grader's broker, which runs the agent's code as nobody (autoenv.grading)
        from autoenv.grading import AGENTCALL

        write(task_dir / "tests" / "agentcall.py", AGENTCALL)
    for path in support:
        shutil.copyfile(path, task_dir / "tests" / path.name)

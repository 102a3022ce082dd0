"""The fields the tests read from each record of a shipped input, against the fields that input has.

A test that computes the expected answer with ``row["region"]`` over ``csv.DictReader(open("/app/sales.csv"))``
fails with a KeyError for every output when the shipped CSV has no ``region`` column: no correct solution can pass
(issue 40's "required fields absent from the shipped data"). Read statically from the tests' Python (test files and
the heredocs of shell verifiers) against the built image's copy of the file, for the ``solvable`` check.

Conservative on purpose: a field counts as present when its name appears anywhere in a CSV's header line or, quoted,
anywhere in a JSON file; only subscripts (``row["x"]``, which raise) count, not ``.get``; a field the tests assign
themselves, a file the instruction asks the agent to change, and a field the instruction asks to add are left out.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autoenv.taskfmt.check import Level, Problem
from autoenv.taskfmt.inputs import deliverable
from autoenv.validate.checks.base import Context
from autoenv.validate.checks.reads import in_image
from autoenv.validate.checks.testcode import PySource, python_sources

#: Readers whose result is a file's records (or, for JSON, its top-level object).
_RECORD_READERS = {"DictReader", "load", "read_csv", "read_json", "loads"}
_PASS_THROUGH = {"list", "sorted", "tuple", "reversed", "enumerate"}
_ADDS = re.compile(r"\b(add|append|insert|enrich|derive|compute|create)\w*\b", re.I)


@dataclass(frozen=True)
class FieldRead:
    """A field the tests index the records of ``path`` with, and where."""

    path: str
    field: str
    file: str
    line: int


def _name(node: ast.AST) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _constants(tree: ast.AST) -> dict[str, str]:
    """Names assigned an absolute path (``LEDGER = "/data/x.csv"``, ``P = Path("/app/x.csv")``), anywhere."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value.args[0] if isinstance(node.value, ast.Call) and node.value.args else node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.startswith("/"):
                found[node.targets[0].id] = str(PurePosixPath(value.value))
    return found


class _Records(ast.NodeVisitor):
    """Follows files to the names their records are bound to, in source order (one pass is enough for tests)."""

    def __init__(self, constants: dict[str, str]):
        self.constants = constants
        self.handles: dict[str, str] = {}  # a name bound to an open file
        self.collections: dict[str, str] = {}  # a name bound to a file's records (a reader, a list, a frame)
        self.records: dict[str, str] = {}  # a name bound to one record (or a JSON file's top-level object)
        self.reads: list[tuple[str, str, ast.AST]] = []  # (file, field, where) as each subscript is met
        self.assigned: set[tuple[str, str]] = set()  # fields the tests set themselves

    def path_of(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/"):
            return str(PurePosixPath(node.value))
        if isinstance(node, ast.Name):
            return self.constants.get(node.id) or self.handles.get(node.id)
        if isinstance(node, ast.Call) and node.args and _name(node) in ("open", "Path", "PurePath"):
            return self.path_of(node.args[0])
        if isinstance(node, ast.Call) and _name(node) in ("open", "read_text") and isinstance(node.func, ast.Attribute):
            return self.path_of(node.func.value)
        return None

    def collection_of(self, node: ast.AST) -> str | None:
        """The file whose records ``node`` iterates over."""
        if isinstance(node, ast.Name):
            return self.collections.get(node.id)
        if isinstance(node, ast.Call):
            name = _name(node)
            if name in _PASS_THROUGH and node.args:
                return self.collection_of(node.args[0])
            if name in _RECORD_READERS and node.args:
                return self.path_of(node.args[0])
        return None

    def bind(self, target: ast.AST, value: ast.AST) -> None:
        if not isinstance(target, ast.Name):
            return
        if (path := self.collection_of(value)) is not None:
            self.collections[target.id] = path
            if isinstance(value, ast.Call) and _name(value) in ("load", "loads", "read_csv", "read_json"):
                self.records[target.id] = path  # json.load's object, a data frame's columns
        elif (path := self.path_of(value)) is not None and isinstance(value, ast.Call):
            self.handles[target.id] = path

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self.bind(item.optional_vars, item.context_expr)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        for target in node.targets:
            self.bind(target, node.value)

    def _loop(self, target: ast.AST, iterable: ast.AST) -> None:
        if isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call) and _name(iterable) == "enumerate":
            target = target.elts[-1]
        if isinstance(target, ast.Name) and (path := self.collection_of(iterable)) is not None:
            self.records[target.id] = path

    def visit_For(self, node: ast.For) -> None:
        self._loop(node.target, node.iter)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._loop(node.target, node.iter)
        self.generic_visit(node)

    def _comprehension(self, node: ast.AST) -> None:
        for generator in node.generators:  # type: ignore[attr-defined]
            self.visit(generator)  # the loop variables first, then the element that uses them
        for field in ("elt", "key", "value"):
            if (child := getattr(node, field, None)) is not None:
                self.visit(child)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.generic_visit(node)
        key = node.slice
        if not (isinstance(node.value, ast.Name) and isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        if (path := self.records.get(node.value.id)) is not None:
            if isinstance(node.ctx, ast.Store):
                self.assigned.add((path, key.value))
            else:
                self.reads.append((path, key.value, node))


def field_reads(source: PySource) -> list[FieldRead]:
    """``record["field"]`` reads of the records of files, in one Python program of the tests."""
    tree = source.tree()
    if tree is None:
        return []
    records = _Records(_constants(tree))
    records.visit(tree)
    return [
        FieldRead(path, field, source.file, source.line(node))
        for path, field, node in records.reads
        if (path, field) not in records.assigned
    ]


def _has_field(file: Path, field: str) -> bool | None:
    """Whether the shipped file has ``field`` (None: not a kind of file this reads)."""
    try:
        text = file.read_text(errors="replace")[:2_000_000]
    except OSError:
        return None
    suffix = file.suffix.lower()
    if suffix in (".csv", ".tsv"):
        header = text.lstrip("\ufeff").split("\n", 1)[0]
        return field in header
    if suffix in (".json", ".jsonl", ".ndjson"):
        try:  # a file that does not parse is one the agent must repair or write, not data to read as it is
            for document in [text] if suffix == ".json" else [line for line in text.splitlines() if line.strip()]:
                json.loads(document)
        except ValueError:
            return None
        return f'"{field}"' in text
    return None


def _asked_to_add(instruction: str, path: str, field: str) -> bool:
    """Whether a sentence of the instruction asks to add ``field`` (to ``path``)."""
    name = PurePosixPath(path).name
    for sentence in re.split(r"(?<=[.!?])\s+|\n\n", instruction):
        if field in sentence and (path in sentence or name in sentence) and _ADDS.search(sentence):
            return True
    return False


def missing_fields(ctx: Context) -> list[FieldRead]:
    """The fields the tests read from a shipped input's records that the image's copy does not have (each once)."""
    if ctx.image is None:
        return []
    instruction = ctx.task.instruction
    found: dict[tuple[str, str], FieldRead] = {}
    for source in python_sources(ctx.task_dir):
        for read in field_reads(source):
            if (read.path, read.field) in found or not in_image(ctx, read.path):
                continue
            if deliverable(instruction, read.path) or _asked_to_add(instruction, read.path, read.field):
                continue
            if _has_field(Path(ctx.image.rootfs) / read.path.lstrip("/"), read.field) is False:
                found[(read.path, read.field)] = read
    return list(found.values())


def missing_field_problems(ctx: Context, fields: list[FieldRead]) -> list[Problem]:
    """One error per missing field, at the test's line."""
    return [
        Problem(
            path=str(ctx.task_dir / f.file),
            line=f.line,
            rule="autoenv-field-missing",
            level=Level.ERROR,
            message=f"the tests read the field {f.field!r} of each record of {f.path}, which the image's copy does not "
            "have: the tests fail on every output, and only editing the input could pass them",
            advice=f"add the {f.field!r} field to the shipped {PurePosixPath(f.path).name} (environment/), or read the "
            "field the data has",
        )
        for f in fields
    ]


__all__ = ["FieldRead", "field_reads", "missing_field_problems", "missing_fields"]

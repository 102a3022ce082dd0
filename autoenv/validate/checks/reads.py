"""The paths a task's tests read, found by reading the tests (no trial): ``open("...")``, ``Path("...")`` and the
readers of Python test files (constants assigned at module level followed), ``cat /x``-style commands and ``< /x``
in shell scripts, each with its file and line.

The solvability check asks of each whether anyone creates it; the input-integrity check whether the agent can edit
it; the ``inputs`` shortcut cheat empties the ones that are the agent's to edit.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autoenv.taskfmt.check import Level, Problem
from autoenv.validate.checks.base import Context

#: Calls whose first argument is a file they read.
_READERS = {"open", "read_csv", "read_json", "read_table", "read_excel", "read_parquet", "loadtxt", "connect", "load"}
_PATH_CALLS = {"Path", "PurePath", "PosixPath"}
#: Path methods that read (or list) the file or folder.
_PATH_READS = {"read_text", "read_bytes", "open", "iterdir", "glob", "rglob"}
_SH_READERS = re.compile(
    r"(?:^|[;&|(]\s*|\s)(?:cat|head|tail|jq|grep|egrep|diff|cmp|wc|sort|uniq|md5sum|sha256sum|sha1sum|sqlite3|awk|"
    r"sed|cut|python3?|bash|sh|source|\.)\s+((?:'[^']*'\s+|\"[^\"]*\"\s+|[^\s;|&<>/'\"][^\s;|&<>]*\s+){0,4}?)"
    r"(/[\w./@+-]+)"
)
_SH_INPUT = re.compile(r"(?<![<>0-9&])<\s*(/[\w./@+-]+)|\bopen\(\s*\\?[\"'](/[\w./@+-]+)")
_SH_WRITES = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?|\bmkdir\s+(?:-p\s+)?|\btouch\s+|-o\s+)\s*(/[\w./@+-]+)")
#: Where the tests' own files, the verdict and scratch space live: never the task's inputs or outputs.
_EXEMPT = ("/tests", "/logs", "/tmp", "/proc", "/sys", "/dev", "/usr", "/bin", "/lib", "/etc", "/var", "/oracle")


@dataclass(frozen=True)
class Read:
    """One path a test file reads, and where."""

    path: str
    file: str  # relative to the task folder
    line: int

    def problem(self, task_dir: Path, level: Level, rule: str, message: str, advice: str) -> Problem:
        """A finding at this read (its test file and line); ``{path}`` in ``message`` is the path read."""
        where = str(task_dir / self.file)
        return Problem(
            path=where, line=self.line, rule=rule, level=level, message=message.format(path=self.path), advice=advice
        )


def _exempt(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in _EXEMPT) or path == "/"


def _absolute(value: object) -> str | None:
    if isinstance(value, str) and value.startswith("/") and "{" not in value and "\n" not in value and len(value) > 1:
        return str(PurePosixPath(value))
    return None


def _call_name(node: ast.AST) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def python_reads(source: str) -> list[tuple[str, int]]:
    """(path, line) of every absolute path a Python file reads; module-level constants are followed."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    constants: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and _call_name(value) in _PATH_CALLS and value.args:
                value = value.args[0]
            if isinstance(value, ast.Constant) and (path := _absolute(value.value)):
                constants[node.targets[0].id] = path

    def resolve(arg: ast.AST) -> str | None:
        if isinstance(arg, ast.Constant):
            return _absolute(arg.value)
        if isinstance(arg, ast.Name):
            return constants.get(arg.id)
        if isinstance(arg, ast.Call) and _call_name(arg) in _PATH_CALLS and arg.args:
            return resolve(arg.args[0])
        return None

    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in _READERS and node.args:
            mode = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            )
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax"):
                continue
            if (path := resolve(node.args[0])) is not None:
                found.append((path, node.lineno))
        elif name in _PATH_READS and isinstance(node.func, ast.Attribute):
            if (path := resolve(node.func.value)) is not None:
                found.append((path, node.lineno))
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def shell_reads(source: str) -> list[tuple[str, int]]:
    """(path, line) of absolute paths a shell script reads (cat, jq, diff, ``< file``...), less those it writes."""
    written: set[str] = set()
    found: list[tuple[str, int]] = []
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#!") else ""
        for match in _SH_READERS.finditer(code):
            found.append((str(PurePosixPath(match.group(2))), number))
        for match in _SH_INPUT.finditer(code):  # (``< file``, or Python's open() in an inline program)
            found.append((str(PurePosixPath(match.group(1) or match.group(2))), number))
        written |= {str(PurePosixPath(m.group(1))) for m in _SH_WRITES.finditer(code)}
    return [(p, n) for p, n in dict.fromkeys(found) if p not in written and not p.endswith(".sh")]


def test_reads(task_dir: Path) -> list[Read]:
    """Every task-relevant path the task's tests read (not the tests' own files, the verdict or scratch space)."""
    tests = task_dir / "tests"
    reads: list[Read] = []
    for file in sorted(tests.rglob("*")) if tests.is_dir() else []:
        if not file.is_file() or file.stat().st_size > 1_000_000:
            continue
        text = file.read_text(errors="replace")
        if file.suffix == ".py":
            pairs = python_reads(text)
        elif file.suffix in (".sh", ".bash") or text.startswith("#!"):
            pairs = shell_reads(text)
        else:
            continue
        rel = file.relative_to(task_dir).as_posix()
        reads += [Read(path, rel, line) for path, line in pairs if not _exempt(path)]
    return reads


def in_image(ctx: Context, path: str) -> bool | None:
    """Whether ``path`` exists in the built image (None: the image cannot be read here)."""
    if ctx.image is None:
        return None
    return (Path(ctx.image.rootfs) / path.lstrip("/")).exists()


def unreadable_image(ctx: Context) -> str | None:
    """Why the built image cannot be read here (None: it can), for the checks that read it."""
    if ctx.image is not None:
        return None
    return "the environment did not build" if ctx.builds_images else f"the image is not readable on {ctx.settings.env}"


def agent_inputs(ctx: Context) -> list[str]:
    """The files the tests read that the image ships (inputs the agent could edit), memoized per validation."""
    if "agent_inputs" not in ctx.memo:
        paths = dict.fromkeys(r.path for r in test_reads(ctx.task_dir))
        ctx.memo["agent_inputs"] = [p for p in paths if in_image(ctx, p) is not False]
    return list(ctx.memo["agent_inputs"])


__all__ = ["Read", "agent_inputs", "in_image", "python_reads", "shell_reads", "test_reads"]

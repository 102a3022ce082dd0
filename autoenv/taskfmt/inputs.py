"""A task's named inputs, and restoring them from the image's copy before its tests run.

A test that recomputes the expected answer from an input in the agent's working folder trusts the agent's copy of
it when the verifier gets that folder back from the agent (a shared verifier, or a separate one whose artifacts
include it): emptying the input and writing the matching trivial output passes (validation's ``inputs`` shortcut
cheat does exactly that). ``autoenv task harden`` fixes such a task without touching its tests: it keeps the image's
copy of each named input under ``tests/autoenv-inputs/`` and puts it back in place at the start of ``test.sh``, so
the tests read the input as the image ships it, under Harbor itself as under autoenv's trials.

A task names its inputs either explicitly, ``inputs = ["/app/orders.csv"]`` under ``[metadata]`` in task.toml, or
by shape: a data file the Dockerfile COPYs from the build context that the instruction names (by path or file name),
the tests mention, no ``RUN`` line changes, and the instruction does not ask the agent to change (``deliverable``).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path, PurePosixPath

from harbor.models.task.config import TaskConfig, VerifierEnvironmentMode

#: Files that hold data (not programs or configurations the task may ask to change).
DATA_SUFFIXES = {".csv", ".tsv", ".json", ".jsonl", ".txt", ".log", ".xml", ".yaml", ".yml", ".db", ".sqlite", ".dat"}
EDIT_VERBS = re.compile(r"\b(fix|edit|repair|update|modify|change|correct|clean|rewrite|patch)\w*\b", re.I)
#: "write ... to PATH": the instruction names PATH as where an output goes (an image may ship a placeholder there).
_WRITE_TO = (
    r"\b(write|writes|writing|written|save|saves|saving|store|stores|storing|put|output|outputs|print|prints|append|"
    r"appends|export|exports|overwrite|overwrites)\b[^.]{{0,120}}?"
    r"\b(to|into|in|as|at)\s+[`\"']?{path}(?![\w-])"
)
#: A test file that checks a checksum of what it reads trusts no edited input.
CHECKSUM = re.compile(r"\b(hashlib|sha\d+sum|md5sum|sha\d+|md5|checksum)\b", re.I)
#: Where a hardened task keeps the image's copies of its inputs, and the list of them, under ``tests/``.
KEPT = "autoenv-inputs"
MANIFEST = "autoenv-inputs.json"
_COPY = re.compile(r"^\s*(COPY|ADD)\s+(.+?)\s*$", re.I | re.M)
_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)", re.I)


def _folder_named(text: str, folder: str) -> bool:
    """``folder`` named as a folder ("the files in /app/config/"), not as the start of a longer path."""
    return re.search(rf"(?<![\w./-]){re.escape(folder)}/?(?![\w./-])", text) is not None


def deliverable(instruction: str, path: str) -> bool:
    """Whether the instruction asks the agent to change ``path``: a sentence naming it, or a folder above it in full
    ("fix only the files in /app/config/"), with fix/edit/repair/..."""
    name = PurePosixPath(path).name
    folders = [str(p) for p in PurePosixPath(path).parents if str(p) != "/"]
    for sentence in re.split(r"(?<=[.!?])\s+|\n\n", instruction):
        named = path in sentence or name in sentence or any(_folder_named(sentence, f) for f in folders)
        if named and EDIT_VERBS.search(sentence):
            return True
    return False


def output_named(instruction: str, path: str) -> bool:
    """Whether the instruction says to write an output to ``path`` ("write the total to /app/x.txt")."""
    return re.search(_WRITE_TO.format(path=re.escape(path)), instruction, re.I) is not None


def _context_files(context: Path, pattern: str) -> list[Path]:
    """What a COPY source names in the build context (``.`` is all of it; nothing outside it)."""
    rel = pattern
    while rel.startswith("./"):
        rel = rel[2:]
    rel = rel.rstrip("/")
    if rel in ("", "."):
        return [context]
    if rel.startswith("/") or ".." in PurePosixPath(rel).parts:
        return []
    try:
        return sorted(context.glob(rel))
    except (ValueError, IndexError):
        return []


def copied_files(task: Path) -> dict[str, Path]:
    """Each file the Dockerfile copies from the build context (``environment/``), by its path in the image."""
    context = task / "environment"
    dockerfile = context / "Dockerfile"
    text = dockerfile.read_text(errors="replace") if dockerfile.is_file() else ""
    workdir, found = "/", {}
    for line in text.splitlines():
        if match := _WORKDIR.match(line):
            workdir = str(PurePosixPath(workdir) / match.group(1))
            continue
        match = _COPY.match(line)
        if match is None or match.group(1).upper() == "ADD" and re.search(r"https?://|\.(tar|tgz|gz|zip)", line):
            continue
        try:
            words = [w for w in shlex.split(match.group(2)) if not w.startswith("--")]
        except ValueError:
            continue
        if "--from" in match.group(2) or len(words) < 2 or words[0].startswith("["):
            continue
        *sources, dest = words
        dest_dir = str(PurePosixPath(workdir) / dest)
        for pattern in sources:
            for source in _context_files(context, pattern):
                if source.is_dir():
                    for file in sorted(p for p in source.rglob("*") if p.is_file()):
                        found[str(PurePosixPath(dest_dir) / file.relative_to(source).as_posix())] = file
                elif source.is_file():
                    into = dest.endswith("/") or len(sources) > 1 or "*" in pattern
                    found[str(PurePosixPath(dest_dir) / source.name) if into else dest_dir] = source
    return found


def _metadata_inputs(task: Path) -> list[str] | None:
    try:
        metadata = tomllib.loads((task / "task.toml").read_text()).get("metadata") or {}
    except (OSError, tomllib.TOMLDecodeError):
        return None
    listed = metadata.get("inputs")
    return [str(PurePosixPath(p)) for p in listed if isinstance(p, str)] if isinstance(listed, list) else None


def _mentions(text: str, what: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(what)}(?![\w-])", text) is not None


def named_inputs(task: Path) -> dict[str, Path]:
    """The task's named inputs that can be restored (their path in the image -> the build context's copy)."""
    copied = copied_files(task)
    listed = _metadata_inputs(task)
    if listed is not None:
        return {p: copied[p] for p in listed if p in copied}
    if not copied:  # (an image named by docker_image, no Dockerfile: nothing to restore from)
        return {}
    instruction_file = task / "instruction.md"
    instruction = instruction_file.read_text(errors="replace") if instruction_file.is_file() else ""
    tests = [
        p.read_text(errors="replace")
        for p in sorted((task / "tests").rglob("*"))
        if p.is_file() and KEPT not in p.parts
    ]
    dockerfile = (task / "environment" / "Dockerfile").read_text(errors="replace")
    runs = "\n".join(line for line in dockerfile.splitlines() if line.strip().upper().startswith("RUN"))
    found = {}
    for path, source in copied.items():
        name = PurePosixPath(path).name
        if PurePosixPath(path).suffix.lower() not in DATA_SUFFIXES or _mentions(runs, name):
            continue
        if not (_mentions(instruction, path) or _mentions(instruction, name)):
            continue
        readers = [text for text in tests if _mentions(text, path)]
        if not readers or any(CHECKSUM.search(text) for text in readers):
            continue  # (a test that checks the input's checksum trusts no edit)
        if not deliverable(instruction, path) and not output_named(instruction, path):
            found[path] = source
    return found


def agent_copy_graded(config: TaskConfig, path: str) -> bool:
    """Whether the verifier sees the agent's copy of ``path`` rather than the image's: a shared verifier, or a
    separate one whose artifacts bring ``path`` back from the agent's sandbox."""
    verifier = config.verifier
    separate = verifier.environment_mode == VerifierEnvironmentMode.SEPARATE or (
        verifier.environment_mode is None and verifier.environment is not None
    )
    if not separate:
        return True
    artifacts = [str(a if isinstance(a, str) else getattr(a, "source", "")) for a in config.artifacts]
    return any(path == a.rstrip("/") or path.startswith(a.rstrip("/") + "/") for a in artifacts if a)


def inputs_to_restore(task: Path) -> dict[str, Path]:
    """The named inputs whose agent's copy the verifier would read, not restored yet (what hardening adds)."""
    if restored_inputs(task):
        return {}
    try:
        config = TaskConfig.model_validate(tomllib.loads((task / "task.toml").read_text()))
    except (OSError, ValueError):
        return {}
    return {p: source for p, source in named_inputs(task).items() if agent_copy_graded(config, p)}


def restored_inputs(task: Path) -> list[str]:
    """The inputs a hardened task's ``test.sh`` puts back from the image's copy (none if it does not)."""
    try:
        return list(json.loads((task / "tests" / MANIFEST).read_text())["restored"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def restore_lines(paths: list[str]) -> str:
    """The lines that start ``test.sh``: each input as the image ships it, in place of whatever the agent left."""
    lines = [
        "# Restored by `autoenv task harden`: the task's inputs as the image ships them (tests/autoenv-inputs/), so",
        "# the tests never read a copy the agent edited.",
    ]
    for path in paths:
        q = shlex.quote
        kept = q(f"/tests/{KEPT}{path}")
        lines.append(
            f"mkdir -p {q(str(PurePosixPath(path).parent))} && rm -rf {q(path)} && cp {kept} {q(path)} && "
            f"chmod a+r {q(path)}"
        )
    return "\n".join(lines) + "\n"


def write_restore(task: Path, inputs: dict[str, Path]) -> None:
    """Make the task copy at ``task`` restore ``inputs`` (path in the image -> its content) before its tests run."""
    tests = task / "tests"
    for path, source in inputs.items():
        kept = tests / KEPT / path.lstrip("/")
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(source.read_bytes())
    (tests / MANIFEST).write_text(json.dumps({"restored": sorted(inputs)}, indent=2) + "\n")
    script = tests / "test.sh"
    lines = script.read_text(errors="replace").splitlines(keepends=True)
    head = lines[:1] if lines and lines[0].startswith("#!") else []
    script.write_text("".join([*head, restore_lines(sorted(inputs)), *lines[len(head) :]]))
    script.chmod(0o755)


__all__ = [
    "DATA_SUFFIXES",
    "EDIT_VERBS",
    "KEPT",
    "MANIFEST",
    "agent_copy_graded",
    "copied_files",
    "deliverable",
    "inputs_to_restore",
    "named_inputs",
    "restore_lines",
    "restored_inputs",
    "write_restore",
]

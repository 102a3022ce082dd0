"""Leaks in the files the agent starts with: copies of the solution or tests, and the expected values anywhere
the agent can read (the built image's root, or a leak-scan trial's copy of the environment)."""

from __future__ import annotations

import filecmp
import gzip
import math
import os
import re
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from autoenv.validate.leakage.literals import (
    MAX_FILE_BYTES,
    MAX_FINDINGS,
    LeakFinding,
    Secrets,
    is_text,
    literal_forms,
    normalize,
    read_text,
    token_in,
)

#: Image paths that are the base system or installed packages, never the task's own files: the static scan
#: (copies of the solution and tests) does not read them.
SKIP_DIRS = re.compile(
    r"(^|/)(site-packages|dist-packages|__pycache__|node_modules|\.cache|\.npm|\.cargo|\.rustup)(/|$)"
    r"|^(usr/share|usr/lib|usr/include|usr/local/lib/python[\d.]+|usr/local/include|var/lib|var/cache|var/log|proc|sys|dev"
    r"|tmp/\.autoenv-shims)(/|$)"
)
#: What the expected-value scan does not read: installed packages and the package managers' own records. Logs,
#: caches and node_modules are read (an answer the task wrote under /var/log or ~/.cache is as readable as one in
#: /app), unless a file is byte for byte the base image's.
PACKAGE_DIRS = re.compile(
    r"(^|/)(site-packages|dist-packages|__pycache__|\.cargo|\.rustup)(/|$)"
    r"|^(usr/share|usr/lib|usr/include|usr/local/lib/python[\d.]+|usr/local/include|proc|sys|dev|tmp/\.autoenv-shims"
    r"|var/lib/(apt|dpkg|ucf|pam|systemd)|var/cache/(apt|debconf|ldconfig|man)"
    r"|var/log/(apt|dpkg\.log|alternatives\.log|bootstrap\.log|faillog|lastlog|wtmp|btmp))(/|$)"
)


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


_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)", re.I | re.M)


def _workdir(task_dir: Path) -> str:
    """The folder the agent starts in (the Dockerfile's last absolute WORKDIR; /app without one)."""
    found = [w for w in _WORKDIR.findall(read_text(task_dir / "environment" / "Dockerfile") or "") if w[0] == "/"]
    return found[-1].rstrip("/") if found else "/app"


def input_paths(task_dir: Path) -> set[str]:
    """The task's inputs: the files the instruction names by path (absolute, or relative to the work folder).

    Only what the agent reads decides it: never the reference solution (the agent never sees it, so a comment in
    solve.sh must not make a file an input), never a folder (not "all files are in /app"), never a bare name
    that matches a file elsewhere."""
    workdir = _workdir(task_dir)
    paths: set[str] = set()
    for word in _MENTION.findall(read_text(task_dir / "instruction.md") or ""):
        word = word.strip(".,;:'\"").rstrip("/")
        if len(word) < 3 or word.startswith("//"):
            continue
        if word.startswith("/"):
            paths.add(str(PurePosixPath(word)))
        elif "." in PurePosixPath(word).name or "/" in word:
            paths.add(str(PurePosixPath(workdir) / word))
    return paths


def _is_input(image_path: str, inputs: set[str]) -> bool:
    return image_path in inputs


def _archive_texts(path: Path):
    """(member name, text) of the text files inside an archive; nothing when it is not one."""
    name = path.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist()[:MAX_ARCHIVE_MEMBERS]:
                    if not info.is_dir() and info.file_size <= MAX_FILE_BYTES:
                        data = zf.read(info)
                        if is_text(data):
                            yield info.filename, data.decode("utf-8", errors="replace")
        elif name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
            with tarfile.open(path) as tf:
                for n, member in enumerate(tf):
                    if n >= MAX_ARCHIVE_MEMBERS:
                        break
                    if member.isfile() and member.size <= MAX_FILE_BYTES and (fh := tf.extractfile(member)):
                        data = fh.read()
                        if is_text(data):
                            yield member.name, data.decode("utf-8", errors="replace")
        elif name.endswith(".gz"):
            with gzip.open(path) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
            if len(data) <= MAX_FILE_BYTES and is_text(data):
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
    skip: re.Pattern[str] | None = PACKAGE_DIRS,
    base: Path | None = None,
) -> list[LeakFinding]:
    """The values the tests compare with, and what the reference solution wrote, in any file the agent can read.

    ``base``: the root of the image the Dockerfile starts from; its files, unchanged, are not the task's (a
    number in the base system's headers is chance, not a leak).

    ``root`` stands for the image's ``/``: every text file outside the installed packages is read, dot-folders,
    logs, caches and archive members included, whatever its name. The task's inputs (the files the instruction
    names by path, :func:`input_paths`) are data the agent is meant to read: a value in one of them is not a leak
    there, and is one in any other file. ``outputs`` (from the partial-solution trial) maps each file the solution wrote
    to its text: a one-value output is looked for like a test literal; of a longer one, the lines that were not
    in the image's own copy of that file, most of them in one file being a copy of the expected output.
    """
    inputs = input_paths(task_dir)
    # each value once, with every form it is written in (4821, 4,821), looked for in its plain form (a thousands
    # separator is chance in code)
    values: dict[str, tuple[tuple[str, ...], str, str]] = {
        forms[0]: (forms, src, "the tests expect it") for forms, src in secrets.answer_values.values()
    }
    copies: dict[str, set[str]] = {}
    for output, content in (outputs or {}).items():
        lines = [normalize(line) for line in content.splitlines() if normalize(line)]
        if len(lines) == 1 and (forms := tuple(literal_forms(lines[0]))):
            values.setdefault(forms[0], (forms, output, "the reference solution writes it"))
        elif len(lines) > 1:
            before = read_text(Path(root) / output.lstrip("/")) or ""
            new = _output_lines(content) - _output_lines(before)
            if len(new) >= 2:
                copies[output] = new
    if not values and not copies:
        return []
    files = list(_readable_texts(Path(root), skip, base))
    findings: list[LeakFinding] = []
    for where, text in files:
        if _is_input(where.split("!")[0], inputs):
            continue
        for value, (_forms, source, why) in values.items():
            if token_in(text, value):
                lineno = next((i for i, ln in enumerate(text.splitlines(), 1) if token_in(ln, value)), 0)
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
            hit = new & lines
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

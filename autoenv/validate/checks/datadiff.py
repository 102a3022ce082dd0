"""Which bytes of a data file differ from what the tests expect, for the feedback of a failed oracle.

A task's own tests often say only "records differs" (issue 42: a model's generated logs had lost their ``\\r``
bytes; its tests compared them byte for byte and its sha256 pins broke). The validator can say more without
reading the tests' logic: after the oracle ran, it holds the task's files and the oracle's ``/app`` (the trial's
collected artifacts). So, for a failed oracle it compares

- each file the tests ship as an expected copy (``tests/**/NAME``, also ``expected_NAME``) with the file of that
  name in the oracle's ``/app`` or in ``environment/``: the first differing offset and the two bytes;
- each file the tests name next to a sha256 pin (a 64-hex literal in a test file that names the file) with its
  digest: which file's bytes are not the ones pinned.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

#: Files compared per failure, lines said: enough to point at the cause, short enough to read.
MAX_FILES, MAX_LINES = 200, 6
_SHA256 = re.compile(r"\b[0-9a-f]{64}\b")
_EXPECTED = re.compile(r"^(expected|want|golden)[_-]", re.I)


def _byte(data: bytes, i: int) -> str:
    if i >= len(data):
        return "end of file"
    b = data[i : i + 1]
    return f"0x{b[0]:02x} {b!r}"


def first_difference(got: bytes, want: bytes) -> str | None:
    """Where two byte strings first differ, in words (None when equal): the offset and the byte on each side."""
    if got == want:
        return None
    n = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    line = got[:n].count(b"\n") + 1
    return f"first difference at byte {n} (line {line}): {_byte(got, n)} vs expected {_byte(want, n)}" + (
        f"; sizes {len(got)} vs {len(want)} bytes" if len(got) != len(want) else ""
    )


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    found = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    return found[:MAX_FILES]


def _pins(texts: list[str], reach: int = 3) -> list[tuple[str, set[str]]]:
    """Each sha256 pin of the tests with the lines around it (where the file it pins is named)."""
    out = []
    for text in texts:
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if hashes := set(_SHA256.findall(line)):
                out.append(("\n".join(lines[max(0, i - reach) : i + reach + 1]), hashes))
    return out


def data_differences(task_dir: Path, trial_dir: str | Path | None) -> list[str]:
    """Lines that say which data bytes differ from what the tests expect (empty when nothing can be said)."""
    task_dir = Path(task_dir)
    app = Path(trial_dir) / "artifacts" / "app" if trial_dir else None
    tests = task_dir / "tests"
    candidates: dict[str, list[tuple[str, Path]]] = {}
    for root, label in ((app, "/app"), (task_dir / "environment", "environment")):
        for path in _files(root) if root is not None else []:
            shown = f"{label}/{path.relative_to(root).as_posix()}"
            candidates.setdefault(path.name, []).append((shown, path))
    lines: list[str] = []
    for expected in _files(tests):
        name = _EXPECTED.sub("", expected.name)
        for shown, path in candidates.get(name, [])[:1]:
            diff = first_difference(path.read_bytes(), expected.read_bytes())
            if diff:
                lines.append(f"{shown} differs from tests/{expected.relative_to(tests).as_posix()}: {diff}")
    pinned = _pins([p.read_text(errors="replace") for p in _files(tests) if p.suffix in (".py", ".sh")])
    for name, places in candidates.items():
        pins = {h for window, hashes in pinned if name in window for h in hashes}
        for shown, path in places:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if pins and digest not in pins and not any(shown in line for line in lines):
                lines.append(
                    f"{shown}: its sha256 {digest[:16]}... is none of the digests the tests pin next to its name "
                    "(were its bytes written as generated? CR, NUL and non-UTF-8 bytes must be kept)"
                )
    return lines[:MAX_LINES]

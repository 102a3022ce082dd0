"""Content identity of a task: the key for caches, the store and deduplication.

Two tasks with the same files are the same task wherever they live, so the
hash covers relative paths and bytes of every file, ignoring autoenv's own
bookkeeping (``.autoenv/``) and caches.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

IGNORED_PARTS = {".autoenv", "__pycache__", ".pytest_cache", ".git", ".DS_Store"}


def task_files(task_dir: Path) -> list[Path]:
    task_dir = Path(task_dir)
    return sorted(
        p
        for p in task_dir.rglob("*")
        if p.is_file() and not (IGNORED_PARTS & set(p.relative_to(task_dir).parts)) and p.suffix != ".pyc"
    )


def task_hash(task_dir: Path | str) -> str:
    task_dir = Path(task_dir)
    digest = hashlib.sha256()
    for path in task_files(task_dir):
        digest.update(path.relative_to(task_dir).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def count_files(task_dir: Path | str) -> int:
    return len(task_files(Path(task_dir)))

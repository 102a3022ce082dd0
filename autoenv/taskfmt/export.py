"""Export accepted tasks as a plain Harbor dataset folder.

The result is what Harbor expects of a local dataset (one task folder each)
and nothing more: autoenv's bookkeeping (``.autoenv/`` verdict caches) is
left behind, so ``harbor run -p DIR -a oracle`` sees ordinary Harbor tasks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autoenv.errors import TaskError
from autoenv.taskfmt.check import check_task, errors
from autoenv.taskfmt.hashing import IGNORED_PARTS


class ExportError(TaskError, ValueError):
    pass


def export_tasks(tasks: list[Path], out: Path, *, overwrite: bool = False) -> list[Path]:
    """Copy each task (checked first) into ``out/<name>``; names that collide get a suffix."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for task in tasks:
        problems = errors(check_task(task))
        if problems:
            raise ExportError(f"{task}: not exportable: {problems[0]}")
        target = out / task.name
        n = 2
        while target.exists() and not overwrite and target not in written:
            target = out / f"{task.name}-{n}"
            n += 1
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(task, target, ignore=shutil.ignore_patterns(*IGNORED_PARTS, "*.pyc"))
        written.append(target)
    return written

"""Export accepted tasks as a plain Harbor dataset folder.

The result is what Harbor expects of a local dataset (one task folder each)
and nothing more: autoenv's bookkeeping (``.autoenv/`` verdict caches) is
left behind, so ``harbor run -p DIR -a oracle`` sees ordinary Harbor tasks.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from autoenv.errors import TaskError
from autoenv.taskfmt.check import check_task, errors
from autoenv.taskfmt.hashing import IGNORED_PARTS


class ExportError(TaskError, ValueError):
    pass


def export_tasks(tasks: list[Path], out: Path, *, overwrite: bool = False, harden: bool = False) -> list[Path]:
    """Copy each task (checked first) into ``out/<name>``; names that collide get a suffix.

    With ``harden``, a task whose tests import the agent's code into pytest is exported hardened
    (:func:`autoenv.taskfmt.harden.harden`: the same tests, the agent's code behind the broker). Every task is
    checked, and every hardening done, before anything is written: a task that is not exportable, or whose tests
    cannot be served, stops the export with its file and line and leaves ``out`` as it was.
    """
    found = {task: errors(check_task(task)) for task in tasks}
    problems = [f"{task}: not exportable: {first[0]}" for task, first in found.items() if first]
    if problems:
        raise ExportError("; ".join(problems))
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-harden-", dir=out.parent) as staging:
        sources = _hardened(tasks, Path(staging)) if harden else list(tasks)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for task, source in zip(tasks, sources):
            target = out / task.name
            n = 2
            while target.exists() and not overwrite and target not in written:
                target = out / f"{task.name}-{n}"
                n += 1
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(*IGNORED_PARTS, "*.pyc"))
            written.append(target)
    return written


def _hardened(tasks: list[Path], staging: Path) -> list[Path]:
    """Each task, or its hardened copy under ``staging`` where it needs one; :class:`ExportError` naming every task
    whose tests cannot be served (never a task exported as it is when it should have been hardened)."""
    from autoenv.taskfmt.harden import HardenError, harden, needs_broker, needs_hardening

    sources, refused = [], []
    for i, task in enumerate(tasks):
        if not needs_hardening(task):
            sources.append(task)
            continue
        try:
            sources.append(harden(task, staging / str(i) / task.name, broker=needs_broker(task)).task)
        except HardenError as exc:
            refused.append(f"{task}: cannot be hardened: " + "; ".join(f"{p.where}: {p.message}" for p in exc.problems))
    if refused:
        raise ExportError("\n".join(refused) + "\nexport the others without them, or without --harden (unsafe: the "
                          "agent's code would decide their reward)")  # fmt: skip
    return sources

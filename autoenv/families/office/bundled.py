"""The office/web families by name, to write a variant or the bundled tasks (``python -m autoenv.families.office``).

Above the registry, which lists these families next to the others: :mod:`autoenv.families.office` itself is what
the families build on, and knows none of them.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from autoenv.families.base import Family
from autoenv.families.registry import FAMILIES

#: examples/tasks/<name> -> (family, seed): the bundled tasks are generated, not hand-edited.
BUNDLED: dict[str, tuple[str, int]] = {
    "incident-runbook-webapp": ("incident-webapp", 11),
    "docx-brief-formatting": ("docx-formatting", 7),
    "variance-formulas-xlsx": ("xlsx-variance", 3),
    "cashflow-scenarios-memo": ("cashflow-memo", 5),
}


def office_families() -> dict[str, Family]:
    """The registered families that write folders (the office and web ones)."""
    return {name: f for name, f in FAMILIES.items() if f.write is not None}


def generate(family: str, task_dir: Path | str, *, seed: int | random.Random = 0, seed_case=None) -> Path:
    """Write a task of ``family`` to ``task_dir`` (replaced if it exists)."""
    families = office_families()
    if family not in families:
        raise ValueError(f"unknown office family {family!r}; known: {', '.join(families)}")
    task_dir = Path(task_dir)
    if task_dir.exists():
        shutil.rmtree(task_dir)
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    families[family].write(task_dir, rng, seed_case)
    return task_dir


def write_bundled(root: Path | str) -> list[Path]:
    """(Re)write the bundled office/web tasks under ``root`` (normally examples/tasks)."""
    return [generate(family, Path(root) / name, seed=seed) for name, (family, seed) in BUNDLED.items()]


__all__ = ["BUNDLED", "generate", "office_families", "write_bundled"]

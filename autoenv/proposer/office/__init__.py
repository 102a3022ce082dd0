"""Office and web task families: deliverables that are documents, workbooks and web-app records.

Each family module exposes ``generate(task_dir, rng, seed_case=None)``, which
writes a complete, randomised Harbor task (different data, phrases and targets
per rng) whose verifier checks a real artefact:

==================  =========================================================================
family              deliverable and how it is checked
==================  =========================================================================
incident-webapp     a resolution saved through a small web app's form; tests read the app's
                    SQLite storage and its audit log (``webapp_family``)
docx-formatting     a .docx brief with a phrase bold, a name italic, a heading centred; tests
                    read it character by character with python-docx (``docx_family``)
xlsx-variance       variance/status/total formulas in a workbook; tests evaluate the formulas
                    with ``formula_eval`` on the sheet's numbers and on perturbed ones
                    (``xlsx_family``)
cashflow-memo       a live scenario sheet plus a memo whose recommendation must follow from
                    the numbers (``cashflow_family``)
==================  =========================================================================

The bundled tasks in ``examples/tasks`` are these generators' output for fixed
seeds (:data:`BUNDLED`); ``python -m autoenv.proposer.office bundled``
rewrites them, ``python -m autoenv.proposer.office generate FAMILY DIR --seed N``
writes a variant.

Registration with the scripted proposer: ``autoenv.proposer.templates`` adds
:func:`template_families` to its ``FAMILIES`` when it is imported; their
``generate(case, rng)`` is :func:`draft`, which returns a ``TaskDraft`` whose
``files`` hold the .docx/.xlsx fixtures as bytes. Their scripted-solver recipes
(:mod:`autoenv.proposer.office.recipes`) let the offline scripted solver
calibrate them.
"""

from __future__ import annotations

import random
import shutil
import string
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autoenv.proposer.office import cashflow_family, docx_family, webapp_family, xlsx_family


@dataclass(frozen=True)
class OfficeFamily:
    name: str
    description: str
    keywords: tuple[str, ...]
    generate: Callable[..., None]


FAMILIES: dict[str, OfficeFamily] = {
    f.name: f
    for f in (
        OfficeFamily(webapp_family.FAMILY, "resolve an incident through a web app: symptom page, runbook library, resolution form",
                     ("web", "browser", "form", "http", "curl", "web app", "incident", "runbook", "page"), webapp_family.generate),
        OfficeFamily(docx_family.FAMILY, "format a Word brief: bold a phrase, italicise a name, centre a heading",
                     ("docx", "word", "document", "bold", "italic", "formatting", "python-docx", "brief"), docx_family.generate),
        OfficeFamily(xlsx_family.FAMILY, "fill variance, status and total formulas in a budget workbook",
                     ("xlsx", "excel", "spreadsheet", "formula", "variance", "openpyxl", "budget", "workbook"), xlsx_family.generate),
        OfficeFamily(cashflow_family.FAMILY, "a live cash-flow scenario sheet and a memo whose recommendation follows from it",
                     ("cash flow", "cashflow", "scenario", "memo", "recommendation", "finance", "forecast", "covenant"), cashflow_family.generate),
    )
}

#: examples/tasks/<name> -> (family, seed): the bundled tasks are generated, not hand-edited.
BUNDLED: dict[str, tuple[str, int]] = {
    "incident-runbook-webapp": (webapp_family.FAMILY, 11),
    "docx-brief-formatting": (docx_family.FAMILY, 7),
    "variance-formulas-xlsx": (xlsx_family.FAMILY, 3),
    "cashflow-scenarios-memo": (cashflow_family.FAMILY, 5),
}


def generate(family: str, task_dir: Path | str, *, seed: int | random.Random = 0, seed_case=None) -> Path:
    """Write a task of ``family`` to ``task_dir`` (replaced if it exists)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown office family {family!r}; known: {', '.join(FAMILIES)}")
    task_dir = Path(task_dir)
    if task_dir.exists():
        shutil.rmtree(task_dir)
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    FAMILIES[family].generate(task_dir, rng, seed_case)
    return task_dir


def write_bundled(root: Path | str) -> list[Path]:
    """(Re)write the bundled office/web tasks under ``root`` (normally examples/tasks)."""
    return [generate(family, Path(root) / name, seed=seed) for name, (family, seed) in BUNDLED.items()]


def family_for(case) -> OfficeFamily | None:
    """The office family a seed case names, or the best keyword match (None if nothing matches)."""
    if getattr(case, "family", None) in FAMILIES:
        return FAMILIES[case.family]
    words = " ".join(str(getattr(case, k, "") or "") for k in ("id", "task", "failure_mode", "target_skill", "trajectory")).lower()
    scored = sorted(((sum(words.count(k) for k in f.keywords), i, f) for i, f in enumerate(FAMILIES.values())), key=lambda t: (-t[0], t[1]))
    return scored[0][2] if scored and scored[0][0] > 0 else None


# -- adapter to the scripted proposer's template interface ----------------------------


def draft(family: str, case, rng: random.Random):
    """A ``templates.TaskDraft`` for ``family``: text files as str, the .docx/.xlsx fixtures as bytes."""
    from autoenv.proposer.templates.base import TaskDraft

    tail = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    name = f"{family}-{tail}"
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = Path(tmp) / name
        FAMILIES[family].generate(task_dir, rng, case)
        files: dict[str, str | bytes] = {}
        executable = set()
        for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
            rel = path.relative_to(task_dir).as_posix()
            data = path.read_bytes()
            try:
                files[rel] = data if path.suffix in (".docx", ".xlsx") else data.decode("utf-8")
            except UnicodeDecodeError:
                files[rel] = data
            if path.stat().st_mode & 0o111:
                executable.add(rel)
    return TaskDraft(name=name, family=family, files=files, executable=executable, params={"family": family})


def template_families() -> list:
    """``templates.Family`` records for the office families, each with its scripted-solver recipe."""
    from autoenv.proposer.office.recipes import RECIPES
    from autoenv.proposer.templates import Family

    return [
        Family(f.name, f.description, f.keywords, (lambda name: lambda case, rng: draft(name, case, rng))(f.name), RECIPES[f.name])
        for f in FAMILIES.values()
    ]


__all__ = ["BUNDLED", "FAMILIES", "OfficeFamily", "draft", "family_for", "generate", "template_families", "write_bundled"]

"""What the office and web families share: families whose generator writes a task folder (documents, workbooks, an app).

==================  =========================================================================
family              deliverable and how it is checked
==================  =========================================================================
incident-webapp     a resolution saved through a small web app's form; tests read the app's
                    SQLite storage and its audit log
docx-formatting     a .docx brief with a phrase bold, a name italic, a heading centred; tests
                    read it character by character with python-docx
xlsx-variance       variance/status/total formulas in a workbook; tests evaluate the formulas
                    with ``formula_eval`` on the sheet's numbers and on perturbed ones
cashflow-memo       a live scenario sheet plus a memo whose recommendation must follow from
                    the numbers
==================  =========================================================================

Each family's ``generator.write(task_dir, rng, seed_case=None)`` writes a complete, randomised
Harbor task; :func:`folder_family` wraps it in the :class:`~autoenv.families.base.Family`
interface (a draft holds the .docx/.xlsx fixtures as bytes). The bundled tasks in
``examples/tasks`` are these generators' output for fixed seeds (:data:`autoenv.families.office.bundled.BUNDLED`);
``python -m autoenv.families.office bundled`` rewrites them and a test checks them against the
generators, ``python -m autoenv.families.office generate FAMILY DIR --seed N`` writes a variant.
"""

from __future__ import annotations

import functools
import random
import string
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from autoenv.families.base import Family, TaskDraft
from autoenv.families.office.common import flat, solution_source
from autoenv.families.solver import ScriptRecipe


class FolderRecipe(ScriptRecipe):
    """The offline solver's recipe for an office/web family.

    It knows the family's tasks by the instruction's first line (``heading``), reads the parameters from the
    instruction alone (``read``, on the instruction as one line) and runs the family's general procedure: the
    reference solution's code in ``files/`` (``solution``) with those parameters, since that code works from
    the instruction and the files alone.
    """

    heading: str = ""
    solution: str = ""

    @property
    def files(self) -> Path:
        return Path(sys.modules[type(self).__module__].__file__).with_name("files")

    def read(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def level_of(self, instruction: str) -> int:
        """The level the instruction reads as, read on it as one line (as :meth:`read` reads it)."""
        return super().level_of(flat(instruction))

    def parse(self, instruction: str) -> dict[str, Any] | None:
        return self.read(flat(instruction)) if instruction.startswith(self.heading) else None

    def found_above_one(self, text: str, deliverable: str, shipped_from: int = 3) -> dict[str, Any] | None:
        """Above level 1 a ladder's instruction tells no rule or target: the family's program finds them in the
        task's files, so the parameters are the level and, from ``shipped_from`` on, the ``deliverable`` path the
        tests run the program at. None at level 1 (the recipe reads the instruction)."""
        level = self.level_of(text)
        if level < 2:
            return None
        return {"level": level, "program_path": deliverable if level >= shipped_from else None}

    def program(self, params: dict[str, Any]) -> str:
        return solution_source(self.files / self.solution, params)


#: Writes one task of a family into a folder: ``(task_dir, rng, seed_case)``.
FolderWriter = Callable[..., None]


def folder_family(package: ModuleType) -> Family:
    """The :class:`Family` of an office/web folder: like :meth:`Family.of`, with a generator that writes a folder
    (``generate(task_dir, rng, seed_case[, level=N])``); its drafts read the folder back (binary fixtures as bytes).
    A generator with a ``LADDER`` (and ``DEFAULT_LEVEL``) is graded like any other family's."""
    gen = package.generator
    ladder = tuple(getattr(gen, "LADDER", ()))

    def draft(case, rng: random.Random, level: int | None = None) -> TaskDraft:
        write = gen.generate if level is None else functools.partial(gen.generate, level=level)
        return _draft_from_folder(gen.NAME, write, case, rng)

    return Family(
        gen.NAME,
        gen.DESCRIPTION,
        gen.KEYWORDS,
        draft,
        package.recipe.RECIPE,
        tuple(level.number for level in ladder),
        getattr(gen, "DEFAULT_LEVEL", None),
        write=gen.generate,
        ladder=ladder,
    )


def _draft_from_folder(family: str, write: FolderWriter, case, rng: random.Random) -> TaskDraft:
    tail = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    name = f"{family}-{tail}"
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = Path(tmp) / name
        write(task_dir, rng, case)
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


__all__ = ["FolderRecipe", "folder_family"]

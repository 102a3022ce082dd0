"""The base of the families' recipes: how the offline scripted solver does a family's tasks.

The scripted policy (autoenv.agents.policies.scripted) solves only what its
recipes recognise. Tasks the scripted proposer writes must be solvable by it
sometimes (calibration needs a pass/fail mix), so each family ships a recipe
beside its generator (``recipe.py``): it reads the instruction, looks at the files like a person would,
writes a general program for the family (never the answers: it does not see
the tests or the solution) and runs it. The policy reads them from
:func:`autoenv.families.registry.recipes` on first use.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoenv.families.levels import Level, Markers, read_level, skill_at
from autoenv.shared.actions import ActionResult, FinishAction, RunAction, WriteFileAction


@dataclass
class Plan:
    """Actions for one turn, with the reasoning text recorded as the step message."""

    actions: list[Any]
    note: str
    info: dict[str, Any] = field(default_factory=dict)


Episode = Generator[Plan, list[ActionResult], None]


class Recipe:
    name: str = "recipe"
    #: The recipe can also be carried out naively (``found["naive"]``: trusting the data as it is), the
    #: plausible wrong strategy the offline learned policy may pick (:mod:`autoenv.agents.policies.learned`).
    naive_variant: bool = False
    #: The family's ladder (its generator's ``LADDER``; empty: one level) and what marks each level above 1 in an
    #: instruction (:func:`~autoenv.families.levels.read_level`; ``climbing(...)`` where each level keeps the
    #: phrase of the level below).
    ladder: tuple[Level, ...] = ()
    level_markers: Markers = ()

    def level_of(self, instruction: str) -> int:
        """The ladder level an instruction reads as (what it asks for, as a solver sees it)."""
        return read_level(instruction, self.level_markers)

    def difficulty(self, instruction: str) -> str | None:
        """What the instruction says about how hard this instance is, if anything: by default its level's skill key
        (:func:`~autoenv.families.levels.skill_at`; None at level 1 or without a ladder)."""
        return skill_at(self.ladder, self.level_of(instruction)) if self.ladder else None

    def match(self, instruction: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        raise NotImplementedError


class ScriptRecipe(Recipe):
    """Look at the inputs, write one program with the parsed parameters, run it, check the output."""

    name = "script"
    #: Interpreter for the program the recipe writes.
    interpreter = "python3"
    program_path = "/tmp/autoenv_solve.py"
    #: Phrases every instruction of the family contains: the recipe reads only instructions that have them all.
    markers: tuple[str, ...] = ()

    def parse(self, instruction: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def program(self, params: dict[str, Any]) -> str:
        raise NotImplementedError

    def look(self, params: dict[str, Any]) -> str:
        paths = " ".join(shlex.quote(p) for p in params.get("inputs", []))
        return f"ls -la /app; head -n 5 {paths}" if paths else "ls -la /app"

    def program_at(self, params: dict[str, Any]) -> str:
        """Where the program goes: where the task asks for one (``params["program_path"]``), else a scratch file."""
        return params.get("program_path") or self.program_path

    def run_command(self, params: dict[str, Any]) -> str:
        return f"{self.interpreter} {self.program_at(params)}"

    def check(self, params: dict[str, Any]) -> str:
        outputs = " ".join(shlex.quote(p) for p in params.get("outputs", []))
        return f"head -n 12 {outputs}" if outputs else "true"

    def match(self, instruction: str) -> dict[str, Any] | None:
        if not all(marker in instruction for marker in self.markers):
            return None
        try:
            return self.parse(instruction)
        except (AttributeError, IndexError, KeyError, ValueError):
            return None

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        yield Plan([RunAction(command=self.look(found))], "Look at the inputs named in the task.")
        program = self.program(found)
        run = yield Plan(
            [
                WriteFileAction(path=self.program_at(found), content=program),
                RunAction(command=self.run_command(found), timeout_sec=120),
            ],
            f"Write a {self.name} program for this task and run it.",
        )
        if not run or run[-1].exit_code != 0:
            yield Plan([FinishAction(message="The program failed.")], "Give up.", {"intent": "recipe_failed"})
            return
        yield Plan([RunAction(command=self.check(found))], "Check the output.")
        yield Plan([FinishAction(message=f"Done ({self.name}).")], "Done.")


def embed(params: dict[str, Any]) -> str:
    """Parameters as a Python literal line for the generated program."""
    return "PARAMS = json.loads(" + repr(json.dumps(params)) + ")\n"


def first(pattern: str, text: str, flags: int = 0) -> str:
    m = re.search(pattern, text, flags)
    if not m:
        raise ValueError(pattern)
    return m.group(1)


#: The line of a recipe's ``files/solver_program.py`` that :func:`fill_program` replaces with the task's parameters.
PARAMS_MARKER = "PARAMS: dict = {}  # filled in by the recipe (solver.embed)\n"


class ShellRecipe(ScriptRecipe):
    """A recipe whose program is a shell script."""

    interpreter = "bash"
    program_path = "/tmp/autoenv_solve.sh"


class ProgramRecipe(ScriptRecipe):
    """A recipe whose program is a real file: its family's ``files/solver_program.py`` with the task's parameters."""

    def program(self, params: dict[str, Any]) -> str:
        return fill_program(program_source(sys.modules[type(self).__module__].__file__), params)


@functools.cache
def program_source(recipe_module: str) -> str:
    """The program a family's recipe writes, kept as a real file (``files/solver_program.py`` beside the recipe)."""
    source = (Path(recipe_module).with_name("files") / "solver_program.py").read_text()
    if PARAMS_MARKER not in source:
        raise RuntimeError(f"{recipe_module}: files/solver_program.py lacks the line {PARAMS_MARKER.strip()!r}")
    return source


def fill_program(source: str, params: dict[str, Any]) -> str:
    """The program with this task's parameters in place of :data:`PARAMS_MARKER`."""
    return source.replace(PARAMS_MARKER, embed(params), 1)


def program_part(recipe_module: str, start: str, end: str | None = None) -> str:
    """The text of a family's ``files/solver_program.py`` from the line ``start`` up to (not including) the line
    ``end`` (None: to the end of the file). A family's reference solutions embed the parts that must say what the
    solver's program says, so one text serves both (a ValueError names a marker the file no longer has)."""
    source = program_source(recipe_module)
    first = source.index(start)
    return source[first : None if end is None else source.index(end, first)]

"""Difficulty ladders: a family's levels, each a recorded set of parameters along named axes.

A capable solver passes every family's first-level task at once (issue 42), so a family that is to keep a
learning agent supplied climbs: each level is harder along axes that make real terminal work hard, not a
longer instruction. A level is data (:class:`Level`): its number, how far it goes along each axis and what it
asks, in words. The generator takes ``level=N`` and writes the level into task.toml's ``[metadata]``
(:func:`level_metadata`), so a task says how hard it was meant to be and the report can plot accepted tasks by
level. The scripted solver's recipes report the level's axes as their ``difficulty`` (its skill key), so a
higher level is a new skill to the learned solver and not the one it already has.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The axes of difficulty (issue 42), in the order they are listed.
AXES: dict[str, str] = {
    "less_told": "formats, conventions and constraints found in the environment instead of told in the instruction",
    "hidden_cases": "the tests run the solver's program on unseen inputs with corners the shipped inputs do not show",
    "composition": "several interacting problems across files, a misleading error or a red herring",
    "scale": "inputs where the naive approach is too slow, with the limit enforced by the tests",
    "friction": "a broken tool or config to repair first, an unfamiliar tool to cope with",
}


class Level(BaseModel):
    """One rung of a family's ladder: its number, its intensity per axis (0: not used) and what it asks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int = Field(ge=1)
    axes: dict[str, int] = Field(default_factory=dict, description="axis -> intensity (1, 2, ...); absent: 0")
    asks: str = Field(description="What a task of this level asks of a solver, in one sentence.")

    def model_post_init(self, _context: object) -> None:
        unknown = set(self.axes) - set(AXES)
        if unknown:
            raise ValueError(f"level {self.number}: unknown axes {sorted(unknown)}; known: {', '.join(AXES)}")

    def skill(self) -> str:
        """The skill key a solver's recipe reports for this level: the level and its axes (``L3:hidden_cases+...``).

        Two levels that differ in their axes are two skills; level 1 (no axis) is the family's plain task.
        """
        used = [axis for axis in AXES if self.axes.get(axis)]
        return f"L{self.number}" + (":" + "+".join(used) if used else "")


class _Rung(BaseModel):
    """One ``[[level]]`` table of a ``levels.toml``: its number is its position."""

    model_config = ConfigDict(extra="forbid")

    axes: dict[str, int] = Field(default_factory=dict)
    asks: str


class _LevelsFile(BaseModel):
    """A family's ``levels.toml``: ``default = N`` and one ``[[level]]`` table per rung, level 1 first."""

    model_config = ConfigDict(extra="forbid")

    default: int = Field(ge=1)
    level: list[_Rung] = Field(min_length=1)


class Ladder(NamedTuple):
    """A family's ladder as its generator exports it (``LADDER, DEFAULT_LEVEL = load_ladder(__file__)``)."""

    levels: tuple[Level, ...]
    default: int


#: The file beside a family's generator that declares its ladder.
LEVELS_FILE = "levels.toml"


def load_ladder(beside: str | Path) -> Ladder:
    """The ladder declared in the ``levels.toml`` beside ``beside`` (a generator's ``__file__``), validated.

    A level is data, so it is a table in a file, not code: ``default = 1`` and, per rung, ``[[level]]`` with
    ``asks = "..."`` and ``axes = {composition = 1, ...}`` (absent: level 1's plain task). A malformed file is a
    ``ValueError`` naming the file and what is wrong with it.
    """
    path = Path(beside).with_name(LEVELS_FILE)
    try:
        declared = _LevelsFile.model_validate(tomllib.loads(path.read_text()))
        levels = tuple(Level(number=n, axes=r.axes, asks=r.asks) for n, r in enumerate(declared.level, 1))
    except (OSError, tomllib.TOMLDecodeError, ValidationError, ValueError) as e:
        raise ValueError(f"{path}: not a valid ladder ({e})") from e
    if declared.default > len(levels):
        raise ValueError(f"{path}: default = {declared.default}, but the file declares {len(levels)} levels")
    return Ladder(levels, declared.default)


def skill_at(ladder: Sequence[Level], level: int) -> str | None:
    """A recipe's ``difficulty`` at ``level``: None at level 1 (the family's plain task), else its skill key."""
    return None if level == 1 else ladder[level - 1].skill()


#: What marks each level above 1 in an instruction: entry ``n - 2`` lists the phrases a level-``n`` instruction
#: contains, all of them (see :func:`read_level`).
Markers = tuple[tuple[str, ...], ...]


def climbing(*phrases: str) -> Markers:
    """The markers of a ladder whose every level keeps the phrase of the level below and adds its own:
    ``climbing(a, b, c)`` is level 2 with ``a``, 3 with ``a`` and ``b``, 4 with all three."""
    return tuple(phrases[:n] for n in range(1, len(phrases) + 1))


def read_level(text: str, markers: Markers) -> int:
    """The level ``text`` reads as: the highest level whose marker phrases all stand in it; 1 when none does."""
    for number in range(len(markers) + 1, 1, -1):
        if all(phrase in text for phrase in markers[number - 2]):
            return number
    return 1


def level_metadata(level: Level) -> str:
    """The task.toml ``[metadata]`` lines that record ``level`` (TOML; Harbor keeps metadata as a free dict)."""
    axes = ", ".join(f"{axis} = {level.axes[axis]}" for axis in AXES if level.axes.get(axis))
    return f"level = {level.number}\nlevel_axes = {{{axes}}}\n"


def with_level(task_toml: str, level: Level) -> str:
    """``task_toml`` with the level recorded at the top of its ``[metadata]`` table (replacing an older record)."""
    text = re.sub(r"^level(_axes)? = .*\n", "", task_toml, flags=re.M)
    if "[metadata]\n" not in text:
        raise ValueError("task.toml has no [metadata] table to record the level in")
    return text.replace("[metadata]\n", "[metadata]\n" + level_metadata(level), 1)


def with_draw(task_toml: str, draw: str) -> str:
    """``task_toml`` with the generator's draw recorded in its ``[metadata]`` (``draw = "..."``, replacing an older
    record): the seed string of the random stream the generator drew the task from. With the family, the level and
    the seed case, it draws the same task again, or the same task a level up (``autoenv propose --method evolve``)."""
    text = re.sub(r'^draw = ".*"\n', "", task_toml, flags=re.M)
    if "[metadata]\n" not in text:
        raise ValueError("task.toml has no [metadata] table to record the draw in")
    escaped = draw.replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("[metadata]\n", f'[metadata]\ndraw = "{escaped}"\n', 1)

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

from pydantic import BaseModel, ConfigDict, Field

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

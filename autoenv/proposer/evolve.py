"""``--method evolve``: a harder variant of a task the proposer is given, judged like any other proposal.

A capable solver passes a family's plain task at once (issue 42), and calibration calls it "too easy". Rather than
start again from a seed case, evolve takes that task (``autoenv propose --method evolve --from TASK_DIR``) and writes
its harder variant:

- the scripted proposer, for a task of a laddered family, draws the same task one level up: the same family, the
  same seed case and the same random stream (``draw``, recorded in the parent's task.toml by
  :func:`~autoenv.proposer.scripted.record_draw`), so the variant keeps the parent's data, domain and names where
  the next level keeps them, and adds what the level adds along its axes. A task at its family's top level, or of
  no laddered family, is out of its reach: :class:`CannotEvolve` says so and names the model proposer;
- a model proposer (``--policy openai``) gets the parent's files and the brief "write a harder variant: one level
  up on one named axis, or compose it with a second accepted task (``--with TASK_DIR``)".

Either way the variant goes through the method's usual path (:mod:`autoenv.proposer.propose`): validation,
calibration, repair rounds, and a "too easy" variant climbs once more while rounds are left. The attempt records its
parent (name and content hash), which the store keeps (``tasks.parent_name``, ``tasks.parent_hash``).
"""

from __future__ import annotations

import random
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoenv.errors import TaskError
from autoenv.families.base import Family, TaskDraft
from autoenv.families.levels import AXES
from autoenv.families.registry import FAMILIES
from autoenv.proposer.episode import read_task_files
from autoenv.proposer.models import ProposeOptions, SeedCase
from autoenv.proposer.scripted import ScriptedProposer, record_draw
from autoenv.proposer.workspace import Workspace
from autoenv.taskfmt.hashing import task_hash
from autoenv.validate.cache import latest_record
from autoenv.validate.calibration import CalibrationReport
from autoenv.vocab import ProposerPolicy

#: How much of a parent's files the model's brief quotes (text files only; the rest are listed by name).
MAX_FILE_CHARS = 12_000
MAX_BRIEF_CHARS = 60_000


class CannotEvolve(TaskError, ValueError):
    """The given task cannot be evolved this way (not a task folder; the scripted proposer and no ladder above it)."""


@dataclass(frozen=True)
class Parent:
    """A task to write a harder variant of: where it is, its content hash and what its task.toml records."""

    path: Path
    name: str
    hash: str
    family: str | None
    level: int | None
    draw: str | None
    seed_case: str | None

    @classmethod
    def read(cls, task_dir: Path | str) -> Parent:
        """The task at ``task_dir`` (CannotEvolve when it is no task folder or its task.toml does not parse)."""
        path = Path(task_dir).resolve()
        toml = path / "task.toml"
        if not toml.is_file():
            raise CannotEvolve(f"{path}: not a task folder (no task.toml); give --from a Harbor task folder")
        try:
            meta = tomllib.loads(toml.read_text()).get("metadata") or {}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CannotEvolve(f"{toml}: task.toml does not parse ({exc}); repair it first") from None
        level = meta.get("level")
        return cls(
            path=path,
            name=path.name,
            hash=task_hash(path),
            family=meta.get("family") if isinstance(meta.get("family"), str) else None,
            level=level if isinstance(level, int) else None,
            draw=meta.get("draw") if isinstance(meta.get("draw"), str) else None,
            seed_case=meta.get("seed_case") if isinstance(meta.get("seed_case"), str) else None,
        )

    def calibration(self) -> str:
        """What calibration last said of this very content (its ``.autoenv`` record), in words for the brief."""
        report = latest_record(self.path, "calibration", self.hash, CalibrationReport)
        if report is None:
            return "no calibration of it is recorded"
        turns = f", {report.mean_turns:.0f} turns on average" if report.mean_turns is not None else ""
        return f"its last calibration ({report.settings.solver}): {report.verdict}{turns}"

    def case(self) -> SeedCase:
        """The seed case the variant is written for: the parent's own (by id; a higher level draws nothing from its
        words), or the parent task itself when it records none."""
        return SeedCase(
            id=self.seed_case or f"evolve-{self.name}",
            task=str(self.path),
            failure_mode=f"calibration called task {self.name} too easy: the solver passed every rollout",
            target_skill=f"a harder variant of {self.name}",
            family=self.family if self.family in FAMILIES else None,
        )


def scripted_target(parent: Parent) -> tuple[Family, int]:
    """The family and level the scripted proposer evolves ``parent`` to: the next level of its family's ladder.

    A task with no level recorded is its family's level 1 (level 1 is the family's task of earlier releases). Raises
    :class:`CannotEvolve`, saying what to do instead, for a task of no laddered family or at its family's top.
    """
    instead = "to have a model write a harder variant, pass --policy openai --model M (and --base-url)"
    family = FAMILIES.get(parent.family or "")
    if family is None:
        what = f"family {parent.family!r} is not one of autoenv's" if parent.family else "records no family"
        raise CannotEvolve(
            f"{parent.path}: the task {what}, so the scripted proposer has no ladder to climb; {instead}"
        )
    if not family.ladder:
        raise CannotEvolve(
            f"{parent.path}: family {family.name} has one level (no ladder), so the scripted proposer has nothing "
            f"harder to draw; {instead}"
        )
    level = parent.level if parent.level is not None else family.levels[0]
    higher = [n for n in family.levels if n > level]
    if not higher:
        raise CannotEvolve(
            f"{parent.path}: level {level} is the top of family {family.name}'s ladder "
            f"({', '.join(map(str, family.levels))}), so the scripted proposer has nothing harder; {instead}"
        )
    return family, higher[0]


def climbed_axes(family: Family, before: int | None, after: int) -> str:
    """What a climb from level ``before`` to ``after`` adds, in words: the axes that rose (``+hidden_cases``)."""
    old = family.level(before).axes if before in family.levels else {}
    new = family.level(after).axes
    rose = [f"+{axis}" for axis in AXES if new.get(axis, 0) > old.get(axis, 0)]
    return ", ".join(rose) or "the same axes, further"


class EvolvingProposer(ScriptedProposer):
    """The scripted proposer, drafting from a parent task instead of a seed case: its draw, one level up.

    It plugs into the scripted attempt of :mod:`autoenv.proposer.propose` as it is: ``draft`` writes the variant,
    ``observe`` climbs once more after "too easy" (in this attempt only: the workspace's own climb is not moved by a
    task it was handed), and a later variant at the same level is a fresh draw of it.
    """

    def __init__(self, parent: Parent, **kwargs: Any):
        super().__init__(**kwargs)
        self.parent = parent
        self.target, self._at = scripted_target(parent)
        self._drawn_at: int | None = None

    def family(self, case: SeedCase) -> Family:
        return self.target

    def draft(self, case: SeedCase, attempt: int, *, variant: int = 0, allow_flaw: bool = True) -> TaskDraft:
        """The parent's task at this attempt's level: its own draw at a level it has not had, a fresh draw of the
        same level for a second variant there (no flaw: it rewrites a task that was already right)."""
        if variant == 0:
            self.last_decisions = []
        draw = self.parent.draw or f"evolve:{self.parent.hash}"
        if attempt or self._at == self._drawn_at:  # another attempt, or a level drawn already: a fresh draw of it
            draw = f"{draw}:a{attempt}v{variant}"
        self._drawn_at = self._at
        draft = self.target.draft(case, random.Random(draw), level=self._at)
        record_draw(draft, draw)
        if draft.name == self.parent.name:  # the family names each level apart; a renamed parent could still match
            draft.name += "-evolved"
        draft.params["parent"] = self.parent.name
        return draft

    def observe(self, family: Family, level: int | None, pass_rate: float | None) -> int | None:
        if pass_rate == 1.0 and level is not None:
            self._at = next((n for n in family.levels if n > level), level)
        return self._at

    def describe(self) -> str:
        """One line for the action log: what the climb from the parent adds."""
        return (
            f"evolve {self.parent.name} ({self.target.name} level {self.parent.level or self.target.levels[0]}) "
            f"to level {self._at}: {climbed_axes(self.target, self.parent.level or self.target.levels[0], self._at)}"
        )


@dataclass(frozen=True)
class Evolution:
    """What an evolve run works from: the parent, an optional second task to compose with, and the options."""

    parent: Parent
    compose: Parent | None = None

    @classmethod
    def plan(cls, options: ProposeOptions) -> Evolution:
        """Read ``--from`` (and ``--with``) and check the run can be done: the scripted proposer needs a level above
        the parent's (:class:`CannotEvolve` otherwise, before any attempt)."""
        assert options.parent is not None, "ProposeOptions checks --method evolve has --from"
        evolution = cls(Parent.read(options.parent), Parent.read(options.compose) if options.compose else None)
        if options.policy == ProposerPolicy.SCRIPTED:
            scripted_target(evolution.parent)
        return evolution

    def model_name(self, attempt: int) -> str:
        """The folder a model writes its variant into: never the parent's own (the workspace may hold it)."""
        return f"{re.sub(r'(-harder-a[0-9]+|-l[0-9]+)$', '', self.parent.name)[:48]}-harder-a{attempt}"

    def proposer(self, **kwargs: Any) -> EvolvingProposer:
        return EvolvingProposer(self.parent, **kwargs)

    def brief(self, workspace: Workspace, task_name: str, *, rollouts: int = 4, max_rounds: int = 3) -> str:
        """The model's brief: the parent's files (and the second task's) and what a harder variant is."""
        parent = self.parent
        where = f"level {parent.level} of family {parent.family}" if parent.level else "no recorded level"
        axes = "\n".join(f"- `{axis}`: {what}" for axis, what in AXES.items())
        compose = (
            f"or compose it with the second task below ({self.compose.name}) into one task whose later stage "
            "depends on the earlier one's result"
            if self.compose
            else "or compose it with a second accepted task (`--with TASK_DIR` names one; none is given here)"
        )
        spec = (workspace.root / "FORMAT.md").read_text() if (workspace.root / "FORMAT.md").is_file() else ""
        sections = [
            f"""\
You design training tasks (Harbor format) for a terminal agent. The task below ({parent.name}, {where}) is to
be made harder for the current solver ({parent.calibration()}). Write a harder variant of it: one level up on
one named axis, {compose}. Say in one line of your reply which axis you raised.

The axes of difficulty (make the environment harder, not the instruction longer):

{axes}

The variant must stay valid: its reference solution passes, doing nothing fails, the tests check only what the
instruction asks (or what the environment shows), and no shortcut passes. Calibration runs {rollouts} solver
rollouts; the variant is accepted when the solver passes some but not all of them. You have {max_rounds}
validation rounds: after each the validator's findings come back and you rewrite the files they name.

Write every file of the variant with `write_file` calls, paths relative to the task folder (tasks/{task_name}),
all in this one reply; then call `finish`.

## Format

{spec}""",
            quote_task(parent, "The task to make harder"),
        ]
        if self.compose is not None:
            sections.append(quote_task(self.compose, "The second task to compose with"))
        return "\n\n".join(sections)


def quote_task(task: Parent, title: str) -> str:
    """A task's files as a brief quotes them: each text file in a fence (long ones cut), binary ones by name."""
    parts = [f"## {title}: {task.name}\n"]
    used = 0
    for rel, data in read_task_files(task.path).items():
        if isinstance(data, bytes):
            parts.append(f"`{rel}`: {len(data)} bytes of binary data (not shown)\n")
            continue
        text = data if len(data) <= MAX_FILE_CHARS else data[:MAX_FILE_CHARS] + f"\n... ({len(data)} characters)\n"
        if used + len(text) > MAX_BRIEF_CHARS:
            parts.append(f"`{rel}`: {len(data)} characters (not shown: the brief is full)\n")
            continue
        used += len(text)
        parts.append(f"`{rel}`:\n\n````\n{text.rstrip()}\n````\n")
    return "\n".join(parts)

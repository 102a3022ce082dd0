"""The offline proposer: real code that drafts varied tasks from templates.

It stands in for a model so the whole pipeline runs without one, and it
behaves like a fallible author: a share of first drafts carry a realistic
mistake (``flaw_rate``), which only validation reveals. It also keeps its
memory: a mistake that validation already made it repair in this workspace is
avoided half of the time in later drafts. Drafts never bypass anything: the
methods write them and hand them to the same validator and calibrator.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import TYPE_CHECKING

from autoenv.families.base import FLAWS, Family, TaskDraft, apply_flaw
from autoenv.families.levels import with_draw
from autoenv.families.registry import FAMILIES, family_for
from autoenv.proposer.models import SeedCase
from autoenv.proposer.workspace import Workspace

if TYPE_CHECKING:
    from autoenv.agents.policies.learned import PolicyTable

#: Which check a flaw trips, as the proposer would file it in its lessons.
FLAW_CHECK = {
    "forgot_copy": "oracle",
    "wrong_output_path": "oracle",
    "answer_in_instruction": "leakage",
    "tests_in_image": "leakage",
    "no_reward_on_failure": "nop",
    "stale_output": "nop",
}


class ScriptedProposer:
    name = "scripted"

    def __init__(
        self,
        *,
        seed: int = 0,
        flaw_rate: float = 0.5,
        workspace: Workspace | None = None,
        table: PolicyTable | None = None,
        level: str | int | None = None,
    ):
        self.seed = seed
        #: A pinned level (a number, or "max": each family's top); None lets the proposer climb (:meth:`observe`).
        self.pinned = level
        self.flaw_rate = flaw_rate
        self.workspace = workspace
        #: Learned preferences (the offline learned policy): whether a first draft is written carefully
        #: is drawn from them instead of ``flaw_rate``, and the draw is recorded for training.
        self.table = table
        #: The draws behind the last first draft (care, difficulty), for training.
        self.last_decisions: list[dict] = []
        self._level: int | None = None

    def family(self, case: SeedCase) -> Family:
        return family_for(case)

    def rng(self, case: SeedCase, attempt: int, variant: int = 0) -> random.Random:
        return random.Random(self.draw_key(case, attempt, variant))

    def draw_key(self, case: SeedCase, attempt: int, variant: int = 0) -> str:
        """The seed string of a draft's random stream (recorded in a laddered task's metadata: :func:`record_draw`)."""
        return f"{self.seed}:{case.id}:{attempt}:{variant}"

    def learned_checks(self) -> set[str]:
        """Checks validation has made this workspace's proposer repair before."""
        if self.workspace is None:
            return set()
        checks = set()
        for entry in self.workspace.history():
            for fix in entry.get("repairs") or []:
                if fix.startswith("[") and "]" in fix:
                    checks.add(fix[1 : fix.index("]")])
        return checks

    def draft(self, case: SeedCase, attempt: int, *, variant: int = 0, allow_flaw: bool = True) -> TaskDraft:
        """A complete task for ``case``; ``variant`` > 0 asks for a different task (a rewrite, not a repair)."""
        rng = self.rng(case, attempt, variant)
        family = self.family(case)
        if variant == 0:
            self.last_decisions, self._level = [], None
        draft = family.draft(case, rng, level=self.level(family, rng, case, attempt))
        if family.ladder:
            record_draw(draft, self.draw_key(case, attempt, variant))
        if not allow_flaw or not self.careless(rng):
            return draft
        learned = self.learned_checks()
        flaws = list(FLAWS)
        rng.shuffle(flaws)
        for flaw in flaws:
            if FLAW_CHECK.get(flaw) in learned and rng.random() < 0.5:
                continue  # memory: this kind of mistake was pointed out before
            flawed = apply_flaw(draft, flaw, rng)
            if flawed.flaw is not None:
                return flawed
        return draft

    def careless(self, rng: random.Random) -> bool:
        """Whether this first draft carries a mistake: ``flaw_rate``, or the learned table's choice."""
        if self.table is None:
            return rng.random() < self.flaw_rate
        return self._choose(FIRST_DRAFT, DRAFT_CHOICES, rng) == "careless"

    def level(self, family: Family, rng: random.Random, case: SeedCase, attempt: int) -> int | None:
        """The difficulty of the draft: the pinned level, else the level the calibrations so far climbed to
        (:meth:`observe`; the family's default at first), or with a learned table its choice among that level and
        the ones either side (:meth:`frontier`).

        The table chooses near the climbed level, not over the whole ladder: its preferences are learned from r_P
        over a few proposals a step and move slowly, while calibration says at once that the solver has mastered a
        level; so the learned proposer climbs with the solver as the scripted one does (issue 42). The table's draw
        comes from its own RNG stream, so a family gaining levels does not change the rest of its drafts.
        """
        if not family.levels:
            return None
        if self.pinned is not None:
            return pinned_level(family, self.pinned)
        if self.table is None:
            return self.climbed().get(family.name)
        if self._level is not None:
            return self._level
        choice = self._choose(
            f"level:{family.name}",
            tuple(str(level) for level in self.frontier(family)),
            random.Random(f"{self.seed}:{case.id}:{attempt}:level"),
        )
        self._level = int(choice)
        return self._level

    # -- climbing: calibration moves the level ---------------------------------------------------------------

    def climbed(self) -> dict[str, int]:
        """The level each family stands at in this workspace (``.proposer/levels.json``; none: the default)."""
        path = self._levels_file()
        if path is None or not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text())
        except ValueError:
            return {}
        return {k: v for k, v in data.items() if isinstance(v, int)} if isinstance(data, dict) else {}

    def frontier(self, family: Family) -> tuple[int, ...]:
        """The levels a learned table chooses among: the one climbed to (the family's default at first) and its
        neighbours on the ladder."""
        at = self.climbed().get(family.name, family.default_level or family.levels[0])
        i = family.levels.index(at) if at in family.levels else 0
        return family.levels[max(0, i - 1) : i + 2]

    def observe(self, family: Family, level: int | None, pass_rate: float | None) -> int | None:
        """Move the family's level by a calibration of a task of ``level``: pass rate 1 ("too easy") to the level
        above it, 0 ("too hard") to the one below, anything else (accepted, or no rate) leaves the level where it
        stands. A pinned level does not move; a learned table's draws move it as a climbing proposer's do (the
        table then chooses around it: :meth:`level`). Returns the family's level from now on."""
        if not family.levels or level is None or self.pinned is not None:
            return level
        if pass_rate == 1.0:
            after = min(family.levels[-1], next((n for n in family.levels if n > level), level))
        elif pass_rate == 0.0:
            after = max(family.levels[0], max((n for n in family.levels if n < level), default=level))
        else:
            after = self.climbed().get(family.name, level)
        path = self._levels_file()
        if path is not None:
            state = {**self.climbed(), family.name: after}
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
        return after

    def _levels_file(self) -> Path | None:
        return None if self.workspace is None else self.workspace.root / ".proposer" / "levels.json"

    def _choose(self, key: str, options: tuple[str, ...], rng: random.Random) -> str:
        from autoenv.agents.policies.learned import draw

        assert self.table is not None
        probs = self.table.probs("proposer", key, options)
        choice = draw(probs, rng)
        self.last_decisions.append(
            {
                "role": "proposer",
                "key": key,
                "strategy": choice,
                "probs": {k: round(v, 6) for k, v in probs.items()},
                "table_version": self.table.version,
            }
        )
        return choice


#: The offline learned proposer's decision: how carefully a first draft is written.
FIRST_DRAFT = "first_draft"
DRAFT_CHOICES = ("careful", "careless")


def draft_hash(draft: TaskDraft) -> str:
    """The content hash the draft will have on disk (same scheme as autoenv.taskfmt.hashing.task_hash)."""
    digest = hashlib.sha256()
    for rel in sorted(draft.files):
        data = draft.files[rel]
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(data if isinstance(data, bytes) else data.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def record_draw(draft: TaskDraft, draw: str) -> TaskDraft:
    """Record the seed string ``draw`` the draft was drawn from in its task.toml (and params), so the task can be
    drawn again, a level up (:mod:`autoenv.proposer.evolve`); a draft without a task.toml text is left as it is."""
    if isinstance(toml := draft.files.get("task.toml"), str):
        draft.files["task.toml"] = with_draw(toml, draw)
        draft.params["draw"] = draw
    return draft


def write_draft(draft: TaskDraft, root: Path) -> Path:
    """Write a draft unless the identical task is already there (keeps its recorded verdicts)."""
    from autoenv.taskfmt.hashing import task_hash

    target = Path(root) / draft.name
    if target.is_dir() and (target / "task.toml").is_file() and task_hash(target) == draft_hash(draft):
        return target
    return draft.write(root)


def pinned_level(family: Family, pin: str | int) -> int:
    """The level ``--level`` names for ``family``: ``max`` its top, N its level N (ValueError when it has none)."""
    if str(pin) == "max":
        return family.levels[-1]
    return family.level(int(pin)).number


def known_families() -> list[str]:
    return sorted(FAMILIES)

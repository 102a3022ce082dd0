"""The offline *learned* policy: the scripted solver's choices drawn from preferences that training changes.

The scripted policy (:mod:`autoenv.agents.policies.scripted`) passes with a fixed
probability, so nothing in an offline flywheel can learn. This policy keeps the
same real commands in the same real sandboxes, but what it does on a task is
drawn from a small table of learned preferences (a softmax over logits, per
task family):

- ``solve``: the family's recipe, carried out and checked (the correct strategy);
- ``rush``: the recipe until it has written its first file, then stop: the
  program is written but never run, the seed cases' "did not verify" failure
  (at the legacy-tool levels the first file is the script that finds how the
  tool was built: nothing investigated, no replacement);
- ``give_up``: look around and stop: the "did not attempt" failure;
- ``naive`` (families whose recipe has a naive variant, below their legacy-tool
  levels): the recipe trusting the data as it is (no validity rules, no
  normalisation): right on a family's easiest level, wrong on the harder ones,
  so mastering one level does not carry over to the next.

Which strategy wins is decided by the task's own verifier, never by the table.
The table is the policy's weights: :class:`PolicyTable` is saved as
``table.json`` in a checkpoint folder ``v{N}``, trained by the ``table``
backend (:mod:`autoenv.train.table`) with the GRPO policy gradient on the
batch's advantages, and loaded by the next step's rollouts (``table=PATH``).
Each episode records its draw (family key, strategy, probabilities) in its
first step's ``extra.decision``, which is what the trainer reads.

It is a small learned table, not a language model: it makes the loop's
dynamics visible and testable without one. The same loop runs a served model
through the ``openai`` policy.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenv.agents.policies.recipes import Episode, Plan, match_recipe
from autoenv.agents.policies.scripted import ScriptedPolicy
from autoenv.shared.actions import FinishAction, WriteFileAction

STRATEGIES: tuple[str, ...] = ("solve", "rush", "give_up")
NAIVE = "naive"
TABLE_FILE = "table.json"
NO_RECIPE = "(no recipe)"


def softmax(logits: dict[str, float], options: tuple[str, ...]) -> dict[str, float]:
    top = max(logits.get(o, 0.0) for o in options)
    weights = {o: math.exp(logits.get(o, 0.0) - top) for o in options}
    total = sum(weights.values())
    return {o: w / total for o, w in weights.items()}


class PolicyTable(BaseModel):
    """The learned policy's weights: logits per role, per decision key, per option (0 where never trained)."""

    version: int = 0
    solver: dict[str, dict[str, float]] = Field(default_factory=dict)
    proposer: dict[str, dict[str, float]] = Field(default_factory=dict)

    def probs(self, role: str, key: str, options: tuple[str, ...]) -> dict[str, float]:
        return softmax(getattr(self, role).get(key, {}), options)

    @classmethod
    def load(cls, path: Path | str | None) -> PolicyTable:
        """A table file, a checkpoint folder holding one, or None for the untrained table (uniform choices)."""
        if path is None:
            return cls()
        path = Path(path)
        if path.is_dir():
            path = path / TABLE_FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no policy table (train one with the `table` trainer, or leave table unset for v0)"
            )
        return cls.model_validate_json(path.read_text())

    def save(self, path: Path | str) -> Path:
        path = Path(path)
        if path.suffix != ".json":
            path = path / TABLE_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(self.model_dump(), indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path


def draw(probs: dict[str, float], rng: random.Random) -> str:
    x, acc = rng.random(), 0.0
    for option, p in probs.items():
        acc += p
        if x < acc:
            return option
    return next(reversed(probs))


class LearnedPolicy(ScriptedPolicy):
    """The scripted solver whose strategy per task family comes from a :class:`PolicyTable`."""

    name = "learned"

    def __init__(self, *, seed: int | None = None, table: str | None = None, policy_version: str | None = None):
        super().__init__(seed=seed, success_rate=1.0, policy_version=policy_version)
        self.table = PolicyTable.load(table)
        if policy_version is None:
            self.policy_version = f"table-v{self.table.version}"

    def decide(self, instruction: str) -> dict[str, Any]:
        matched = match_recipe(instruction)
        key = matched[0].name if matched else NO_RECIPE
        if matched and (difficulty := matched[0].difficulty(instruction)):
            key += f":{difficulty}"  # what was learned on clean data says nothing about messy data
        task_key = hashlib.sha256(instruction.strip().encode()).hexdigest()[:16]
        # a legacy tool's level has no naive way: its replacement is the tool's build, found or not
        naive = matched is not None and matched[0].naive_variant and not matched[1].get("legacy")
        options = STRATEGIES + ((NAIVE,) if naive else ())
        probs = self.table.probs("solver", key, options)
        strategy = draw(probs, random.Random(f"{self.seed}:{task_key}"))
        return {
            "seed": self.seed,
            "task_key": task_key,
            "role": "solver",
            "key": key,
            "strategy": strategy,
            "probs": {k: round(v, 6) for k, v in probs.items()},
            "table_version": self.table.version,
            "attempt": strategy != "give_up",
        }

    def _found(self, found: dict[str, Any]) -> dict[str, Any]:
        return {**found, "naive": True} if self._decision.get("strategy") == NAIVE else found

    def _play(self, instruction: str) -> Episode:
        strategy = self._decision["strategy"]
        if strategy != "rush":
            yield from super()._play(instruction)
            return
        episode = super()._play(instruction)
        results = None
        first = True
        while True:
            try:
                plan = next(episode) if first else episode.send(results)
            except StopIteration:
                return
            first = False
            writes = [a for a in plan.actions if isinstance(a, WriteFileAction)]
            if writes:  # write what the recipe wrote, run nothing of it, and stop
                yield Plan(writes, plan.note + " (writing only)", {**plan.info, "intent": "rush"})
                yield Plan(
                    [FinishAction(message="Written; done.")],
                    "The program is written; I will not run it.",
                    {"intent": "rush"},
                )
                return
            results = yield plan


__all__ = ["STRATEGIES", "NAIVE", "PolicyTable", "LearnedPolicy", "softmax", "draw"]

"""The learned proposer climbs with the solver across flywheel steps (issue 42), in real sandboxes.

A solver that has mastered a level makes calibration call that level's tasks "too easy"; the proposer's level then
moves up, is kept in the run's workspace from one step to the next, and the learned table chooses among the level
climbed to and its neighbours, so the tasks accepted are the ones at the solver's frontier. Before, the table chose
over the whole ladder and the climb was off for it: the accepted level did not follow the solver.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from autoenv.agents.policies.learned import PolicyTable
from autoenv.families.csv_stat.generator import LADDER
from autoenv.families.registry import FAMILIES
from autoenv.flywheel.loop import Flywheel
from autoenv.proposer.models import SeedCase
from autoenv.proposer.scripted import FIRST_DRAFT
from autoenv.report.levels import accepted_levels
from autoenv.store.db import Store
from bench.flywheel_dynamics import generated_set, run_configs
from tests.conftest import REPO, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]

FAMILY = FAMILIES["csv-stat"]
#: The learned solver's table keys for csv-stat (its recipe's difficulty): clean rows (level 1), messy rows (2-3).
MASTERED = ("csv_group_statistic:clean", "csv_group_statistic:messy")


def level_draws(store: Store, run: str) -> list[tuple[int, tuple[int, ...], int]]:
    """Each attempt's (step, the levels the table chose among, the level it drew), from its recorded episode."""
    draws = []
    for attempt in store.attempts(run):
        episode = json.loads(Path(attempt["episode_path"]).read_text())
        for decision in episode.get("decisions") or []:
            if decision["key"] == f"level:{FAMILY.name}":
                options = tuple(sorted(int(o) for o in decision["probs"]))
                draws.append((attempt["step"], options, int(decision["strategy"])))
    return draws


def test_the_learned_proposer_climbs_past_what_the_solver_has_mastered(tmp_path):
    case = SeedCase.load(REPO / "examples" / "seed_cases" / "csv-weighted-stats.yaml")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    case.dump(seeds / f"{case.id}.yaml")
    benchmark = generated_set(tmp_path / "benchmark", [case], per_case=1, seed=1000)
    config = run_configs(tmp_path, 2, seeds, benchmark, benchmark, 1)["autoenv"].model_copy(
        update={"proposals_per_step": 2, "tasks_per_step": 1, "group_size": 2}
    )
    # v0: a solver that has learned clean and messy rows (every rollout solves them) but not level 4's program on
    # unseen files; a proposer that has learned to write its first drafts carefully (a careless one is invalid as
    # often as not: the test is about levels), its choice of level untrained (uniform over what it may choose)
    mastered = PolicyTable(solver={key: {"solve": 12.0} for key in MASTERED}, proposer={FIRST_DRAFT: {"careful": 12.0}})
    mastered.save(tmp_path / "runs" / config.run / "train" / "v0" / "table.json")
    store = Store(tmp_path / "climb.db")
    asyncio.run(Flywheel(config, store).run())

    draws = level_draws(store, config.run)
    assert len(draws) == 4, draws
    # the first draw: around the family's default level; every draw: the level climbed to and its neighbours
    assert draws[0][1] == (1, 2, 3), draws
    for _, options, drawn in draws:
        assert drawn in options and len(options) <= 3 and options == tuple(range(options[0], options[-1] + 1))
    # what the solver had mastered was "too easy": the level climbed, and the next step drew from higher up
    workspace = tmp_path / "runs" / config.run / "workspace"
    climbed = json.loads((workspace / ".proposer" / "levels.json").read_text())[FAMILY.name]
    assert climbed >= 3, climbed
    assert max(options[-1] for step, options, _ in draws if step == 1) >= LADDER[3].number, draws
    # and what was accepted is above what the solver had learned: level 4's program or level 5's (the two skills
    # it had not learned)
    paths = {t["hash"]: t["path"] for t in store.tasks()}
    levels = [lv for row in accepted_levels(store.attempts(config.run), paths) for lv in row["levels"]]
    assert levels and min(levels) >= LADDER[3].number, levels

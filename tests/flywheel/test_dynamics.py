"""The offline loop learns, in real sandboxes: a short run of bench/flywheel_dynamics.py's setup, fixed seeds.

Directions only (bench/README.md records a full 6-step run, with the no-proposer-training baseline): the
learned table moves with the verifiers' rewards for the solver and with r_P for the proposer, each step acts
on the table the previous step saved, and a static set the solver masters stops giving useful groups.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from autoenv.agents.policies.learned import PolicyTable
from autoenv.flywheel.loop import Flywheel
from autoenv.proposer.models import SeedCase
from autoenv.store.db import Store
from autoenv.train.batch import TrainingBatch
from autoenv.train.table import recorded_decisions
from bench.flywheel_dynamics import generated_set, run_configs
from tests.conftest import REPO, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]

SEEDS = ("csv-weighted-stats", "median-bug-unsorted")


def test_a_short_flywheel_learns_as_solver_and_as_proposer(tmp_path):
    cases = [SeedCase.load(REPO / "examples" / "seed_cases" / f"{name}.yaml") for name in SEEDS]
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for case in cases:
        case.dump(seeds / f"{case.id}.yaml")
    benchmark = generated_set(tmp_path / "benchmark", cases, per_case=1, seed=1000)
    configs = run_configs(tmp_path, 2, seeds, benchmark, benchmark, 1)
    store = Store(tmp_path / "dynamics.db")
    # groups of 8: the untrained table draws the rewarded strategy with p 1/3 or 1/4, so with groups of 4 a run
    # without a single useful group is a ~1% draw, decided by the tasks' content hashes (the rollout seeds)
    config = configs["autoenv"].model_copy(update={"proposals_per_step": 2, "group_size": 8})
    reports = asyncio.run(Flywheel(config, store).run())
    assert [r.policy_version_in for r in reports] == [0, reports[0].policy_version_out]
    train = tmp_path / "runs" / "autoenv" / "train"
    final = PolicyTable.load(train / f"v{reports[-1].policy_version_out}")
    assert final.version == reports[-1].policy_version_out >= 1

    # the solver: every draw came from the table its step started with, and the rewarded strategy gained
    for row in store.rollouts("autoenv"):
        steps = json.loads(Path(row["trajectory_path"]).read_text())["steps"]
        decision = next(s["extra"]["decision"] for s in steps if (s.get("extra") or {}).get("decision"))
        assert decision["table_version"] == row["policy_version"]
    batches = [TrainingBatch.read_jsonl(p) for p in sorted((train / "batches").glob("step-*.jsonl"))]
    solver = [s for b in batches for s in b.samples if s.role == "solver"]
    assert solver, "the run had useful groups"
    won = {recorded_decisions(s)[0]["key"] for s in solver if s.reward >= 1.0}
    for key in won:
        probs = final.probs("solver", key, tuple(final.solver[key]))
        assert probs["solve"] == max(probs.values()), (key, probs)

    # the proposer: trained on its episodes' draws, exactly as recorded
    proposer = [s for b in batches for s in b.samples if s.role == "proposer"]
    assert all(s.meta["decisions"] for s in proposer)
    if proposer:
        assert final.proposer, "r_P with variance moved the proposer's choices"


def test_the_static_baseline_saturates_as_the_solver_masters_its_fixed_set(tmp_path):
    """Fig. 7's baseline: on a fixed set of easy tasks the groups lose their reward variance once the solver has
    learned them."""
    cases = [SeedCase.load(REPO / "examples" / "seed_cases" / "csv-weighted-stats.yaml")]
    static = generated_set(tmp_path / "static", cases, per_case=2, seed=2000, level=1)
    # 6 steps: a step whose groups still vary trains the table further, so the last step's groups are saturated
    # with a wide margin (after 4 steps the unrewarded strategies kept ~6%: 8 rewarded draws were a ~60% outcome)
    config = run_configs(tmp_path, 6, tmp_path, static, static, 1)["static"].model_copy(
        update={"trainer": "table:lr=4", "tasks_per_step": 2, "benchmark_dir": None}
    )
    reports = asyncio.run(Flywheel(config, Store(tmp_path / "static.db")).run())
    rates = [r.useful_group_rate for r in reports]
    # saturated: most of the last steps' groups have no reward variance left (a draw of the ~6% the unrewarded
    # strategies keep can still make one group useful: the rate's level, not one step's value, is the claim)
    assert rates[0] > 0 and sum(rates[-3:]) / 3 <= 0.25 and 0.0 in rates[-3:], f"useful-group rate per step: {rates}"

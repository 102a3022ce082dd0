"""bench/flywheel_model.py: the learned-table loop without sandboxes, and the trainer property it explains.

The model steps its tables with the ``table`` trainer's own update; these check the two facts the bench's
conclusion rests on (bench/README.md, "Why the flywheel does not beat proposer-off"): the static arm, trained on
clean data only, learns nothing about the messy benchmark while both proposing arms do; and one step moves a
skill's logits by the same amount whether a batch holds one useful group of that skill or several.
"""

from __future__ import annotations

import statistics

import pytest

from autoenv.agents.policies.learned import PolicyTable
from autoenv.train.table import policy_gradient_step
from bench.flywheel_model import VARIANTS, run


def test_the_model_reproduces_the_measured_arms():
    results = run(VARIANTS["measured"], seeds=40)
    final = {arm: statistics.fmean(b[-1] for b, _ in per_seed) for arm, per_seed in results.items()}
    first = {arm: statistics.fmean(b[0] for b, _ in per_seed) for arm, per_seed in results.items()}
    # the static arm masters clean data and stays at the untrained policy's chance on messy data (1 in 4)
    assert abs(final["static"] - 0.25) < 0.1, final
    # both arms that propose tasks learn the benchmark's skill, to within a few points of each other
    assert final["autoenv"] > first["autoenv"] + 0.3 and final["proposer-off"] > first["proposer-off"] + 0.3
    assert abs(final["autoenv"] - final["proposer-off"]) < 0.1, final


def _group(passes: int) -> list[tuple[float, str, list[dict]]]:
    """A group of 4 rollouts on skill ``messy`` under the untrained table: ``passes`` solved, the rest rushed."""
    from autoenv.train.grpo import group_advantages

    probs = PolicyTable().probs("solver", "messy", ("solve", "rush", "give_up", "naive"))
    strategies = ["solve"] * passes + ["rush"] * (4 - passes)
    advantages = group_advantages([1.0 if s == "solve" else 0.0 for s in strategies])
    return [(a, "solver", [{"key": "messy", "strategy": s, "probs": probs}]) for a, s in zip(advantages, strategies)]


def test_one_step_moves_a_skill_as_far_for_one_useful_group_as_for_three():
    one, three = PolicyTable(), PolicyTable()
    policy_gradient_step(one, _group(2), lr=2.0)
    policy_gradient_step(three, _group(2) * 3, lr=2.0)
    assert one.solver["messy"] == pytest.approx(three.solver["messy"])
    assert one.solver["messy"]["solve"] > 0 > one.solver["messy"]["rush"]

"""The ladders of primer-tm, mlp-rebuild, incident-webapp and xlsx-variance (issue 42), read without a sandbox.

tests/proposer/test_ladders.py validates every level of every laddered family for real (oracle, nop, partial,
tamper) and has the scripted solver solve it; here: level 1 is the task of earlier releases byte for byte, each
higher level is a skill of its own to the learned solver, and what a level no longer tells is really gone from
its instruction (and really there in the environment).
"""

from __future__ import annotations

import random

import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase

LADDERED_HERE = ("primer-tm", "mlp-rebuild", "incident-webapp", "xlsx-variance")

#: family -> (words the level-1 instruction uses to tell the rules, which no higher level's instruction has;
#: the file in the environment that tells them instead from level 2 or 3 on, and the level it starts at)
TOLD_AT_ONE = {
    "primer-tm": (("Tm = 64.9", "81.5 + 16.6", "[Na+]"), "environment/app/protocol/tm.conf", 3),
    "mlp-rebuild": (("units x inputs", "inputs x units", "normalization.mean"), "environment/app/model/EXPORT.md", 2),
    "incident-webapp": (("on-call engineer named", "permanent fix"), "environment/app/docs/process.md", 2),
    "xlsx-variance": (("minus", "% of that row's budget", "data in rows"), None, 2),
}


def case_for(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def draft(family: str, level: int, seed: int = 7):
    return FAMILIES[family].draft(case_for(family), random.Random(seed), level=level)


@pytest.mark.parametrize("family", LADDERED_HERE)
def test_four_levels_and_level_one_unchanged(family):
    fam = FAMILIES[family]
    assert fam.levels == ((1, 2, 3, 4, 5) if family == "primer-tm" else (1, 2, 3, 4)) and fam.default_level == 1
    for seed in range(3):
        plain = fam.generate(case_for(family), random.Random(seed))
        drafted = fam.draft(case_for(family), random.Random(seed), level=1)
        assert {k: v for k, v in plain.files.items() if k != "task.toml"} == {
            k: v for k, v in drafted.files.items() if k != "task.toml"
        }
        assert drafted.files["task.toml"].replace("level = 1\nlevel_axes = {}\n", "") == plain.files["task.toml"]


@pytest.mark.parametrize("family", LADDERED_HERE)
def test_each_level_is_a_skill_of_its_own(family):
    skills = []
    for level in FAMILIES[family].levels:
        instruction = draft(family, level).files["instruction.md"]
        recipe, _ = match_recipe(instruction)
        assert recipe is FAMILIES[family].recipe
        skills.append(recipe.difficulty(instruction))
    assert skills[0] is None and skills[1:] == [FAMILIES[family].level(n).skill() for n in FAMILIES[family].levels[1:]]


@pytest.mark.parametrize("family", LADDERED_HERE)
def test_what_a_level_no_longer_tells_is_found_in_the_environment(family):
    words, where, start = TOLD_AT_ONE[family]
    one = draft(family, 1).files["instruction.md"]
    assert any(w in one for w in words), "level 1 tells the rules"
    for level in range(start, 5):
        task = draft(family, level)
        told = [w for w in words if w in task.files["instruction.md"]]
        assert not told, f"level {level} still tells {told}"
        if where:
            assert where in task.files, f"level {level} lacks {where}"


def test_top_levels_hold_their_traps():
    """The corners and red herrings each top level promises are in the task it writes."""
    primer = draft("primer-tm", 4)
    assert {"tests/hidden_tie.fasta", "tests/hidden_empty.fasta", "tests/hidden_unpaired.fasta"} <= set(primer.files)
    assert "retired" in primer.files["environment/app/protocol/tm.conf"]
    assert "nearest-neighbour" in primer.files["environment/app/protocol/METHODS.txt"]
    assert "\r\n" in primer.files["tests/hidden_crlf.fasta"]
    mlp = draft("mlp-rebuild", 4)
    assert "environment/app/model/CURRENT" in mlp.files and "environment/app/model/mlp-2023-11.json" in mlp.files
    assert "\r\n" in mlp.files["tests/unseen_corners.csv"] and "e+06" in mlp.files["tests/unseen_corners.csv"]
    incident = draft("incident-webapp", 4)
    assert "superseded" in incident.files["environment/app/data/seed.json"]
    assert "| deputy |" in incident.files["environment/app/docs/rota.md"]
    assert "curl" not in incident.files["environment/Dockerfile"]
    xlsx = draft("xlsx-variance", 4)
    tests = xlsx.files["tests/test_outputs.py"]
    assert "def test_formulas_on_corner_figures" in tests and "def test_actuals_are_formulas_over_the_ledger" in tests

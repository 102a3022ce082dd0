"""Task families: complete, varied tasks; the scripted solver recognises each; flaws and repairs."""

from __future__ import annotations

import random
import re

import pytest
from harbor.models.task.config import VerifierEnvironmentMode
from harbor.models.task.task import Task
from proposer_helpers import bundled_seed_cases

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.base import FLAWS, apply_flaw
from autoenv.families.registry import FAMILIES
from autoenv.proposer.fixer import repair, sections
from autoenv.proposer.models import SeedCase
from autoenv.proposer.scripted import ScriptedProposer, draft_hash, write_draft
from autoenv.taskfmt.check import check_task
from autoenv.taskfmt.hashing import task_hash

OURS = [name for name, fam in FAMILIES.items() if fam.write is None]
#: families solved by the scripted policy's own recipes
THEIRS = {"bugfix": "fix_function", "text-classification": "text_classifier"}


def case_for(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def test_there_are_eight_template_families():
    assert {
        "bugfix",
        "csv-stat",
        "log-parse",
        "config-repair",
        "text-classification",
        "primer-tm",
        "mlp-rebuild",
        "shell-script",
    } <= set(OURS)


@pytest.mark.parametrize("family", OURS)
def test_family_writes_well_formed_varied_tasks(family, tmp_path):
    drafts = [FAMILIES[family].generate(case_for(family), random.Random(seed)) for seed in (1, 2, 3)]
    assert len({d.name for d in drafts}) == 3
    assert len({d.files["instruction.md"] for d in drafts}) >= 2, "different data/targets give different instructions"
    data = [{k: v for k, v in d.files.items() if k.startswith("environment/app/")} for d in drafts]
    assert data[0] != data[1] != data[2]
    for draft in drafts:
        task = draft.write(tmp_path)
        assert check_task(task) == [], [str(p) for p in check_task(task)]
        assert task_hash(task) == draft_hash(draft)
        toml = draft.files["task.toml"]
        assert 'network_mode = "no-network"' in toml and f'family = "{family}"' in toml
        config = Task(task).config  # Harbor's own loader
        assert config.verifier.environment_mode == VerifierEnvironmentMode.SEPARATE, "tests must run in a fresh sandbox"
        assert "/app" in config.artifacts, "the deliverables are collected for the separate verifier"
        assert "/logs/verifier/reward.txt" in draft.files["tests/test.sh"]
        docker = draft.files["environment/Dockerfile"]
        assert docker.startswith(
            ("FROM python:3.12-slim\nRUN pip install --no-cache-dir pytest==8.3.4\n", "FROM debian:bookworm-slim\n")
        )
        matched = match_recipe(draft.files["instruction.md"])
        assert matched is not None, f"the scripted solver does not recognise {draft.name}"
        expected = THEIRS.get(family)
        assert matched[0].name == expected if expected else matched[0] is FAMILIES[family].recipe


def test_same_seed_same_task_different_attempt_different_task():
    case = case_for("csv-stat")
    a, b, c = (ScriptedProposer(seed=3).draft(case, attempt) for attempt in (0, 0, 1))
    assert a.files == b.files and a.name == b.name
    assert a.name != c.name


def test_primer_family_drops_python_when_the_seed_says_it_was_missing():
    case = SeedCase(
        id="p",
        task="t",
        failure_mode="the solver lacks Python in its image",
        target_skill="melting temperatures",
        family="primer-tm",
    )
    for seed in range(4):
        draft = FAMILIES["primer-tm"].generate(case, random.Random(seed))
        assert draft.params["no_python"] and "rm -f /usr/bin/python3" in draft.files["environment/Dockerfile"]
        assert "Python is **not** available" in draft.files["instruction.md"]
        assert "tests/test_outputs.py" not in draft.files, "the verifier must not need Python either"


def test_flaws_change_what_they_say():
    draft = FAMILIES["csv-stat"].generate(case_for("csv-stat"), random.Random(5))
    out = draft.params["output_path"]
    for flaw in FLAWS:
        flawed = apply_flaw(draft, flaw, random.Random(0))
        assert flawed.flaw == flaw and flawed.files != draft.files and flawed.clean
    assert "COPY app/" not in apply_flaw(draft, "forgot_copy", random.Random(0)).files["environment/Dockerfile"]
    assert out not in apply_flaw(draft, "wrong_output_path", random.Random(0)).files["solution/solve.sh"]


def test_fixer_reads_only_the_feedback(tmp_path):
    """Synthetic feedback in the validator's format: each section leads to the right file."""
    draft = FAMILIES["csv-stat"].generate(case_for("csv-stat"), random.Random(5))
    flawed = apply_flaw(apply_flaw(draft, "tests_in_image", random.Random(0)), "forgot_copy", random.Random(0))
    task = write_draft(flawed, tmp_path)
    feedback = (
        "Task x is not valid.\n\n[oracle] The reference solution ... FileNotFoundError: [Errno 2] No such file or "
        "directory: "
        "'/app/data/sales.csv'\n\n[leakage] The agent can see what it is supposed to produce:\n"
        "- test_program_in_image: /app/test_outputs.py <- tests/test_outputs.py (a file with the name of one of the "
        "task's test programs)\n"
    )
    assert set(sections(feedback)) == {"oracle", "leakage"}
    fixes = [str(f) for f in repair(task, feedback)]
    assert any("COPY app/ /app/" in f for f in fixes) and any("test_outputs.py" in f for f in fixes)
    assert re.search(r"^COPY app/ /app/$", (task / "environment" / "Dockerfile").read_text(), re.M)
    assert not (task / "environment" / "app" / "test_outputs.py").exists()
    assert repair(task, "Task x is not valid.\n\n[deterministic] flaky\n") == []


def test_bundled_seed_cases_draft_in_their_family():
    for path in bundled_seed_cases():
        case = SeedCase.load(path)
        draft = ScriptedProposer(seed=0, flaw_rate=0.0).draft(case, 0)
        assert draft.family == case.family and draft.flaw is None

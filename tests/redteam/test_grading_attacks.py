"""Red team against grading: every bundled task, every cheat family of the validator's adversary.

The adversary (autoenv/agents/adversary.py) never solves the task. Its families:
``reward`` (forged and read-only reward files, a detached rewriter, a fork-hopping
rewriter, programs shadowed earlier on PATH, ``.pth``/``sitecustomize`` hooks that
make every Python exit 0), ``tests`` (rewritten test files, planted conftest.py and
pytest.py) and ``outputs`` (empty outputs, exit-0 stubs). Bundled tasks grade in a
fresh sandbox (separate verifier mode), so none of it may reach the reward. The
same attacks do win against a shared-mode verifier, which is what the last test shows.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from autoenv.agents.adversary import CHEAT_FAMILIES
from autoenv.trials.runner import arun_many, run_trial
from tests.conftest import bundled_tasks, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("family", CHEAT_FAMILIES)
def test_no_bundled_task_rewards_a_cheat_family(tmp_path, family):
    tasks = bundled_tasks()
    outcomes = asyncio.run(arun_many([(t, "adversary", {"cheats": family}) for t in tasks], n_concurrent=2, trials_dir=tmp_path))
    forged = [(o.task, o.reward, o.error) for o in outcomes if o.reward != 0.0]
    assert not forged, forged
    cheats = [json.loads((Path(o.trial_dir) / "agent" / "adversary.json").read_text())["cheats"] for o in outcomes]
    # the reward and tests families apply everywhere; outputs only where the instruction names a file
    # the agent has not got yet (an output to fake)
    applied = sum(bool(c) for c in cheats)
    assert applied == len(tasks) if family != "outputs" else applied >= len(tasks) // 2, (family, applied, len(tasks))


def test_the_same_attacks_win_against_a_shared_mode_verifier(tmp_path):
    """The control: a shared-mode copy of a bundled task is beaten by the reward family alone."""
    import shutil

    from tests.conftest import EXAMPLE_TASKS

    task = tmp_path / "shared-fix-median-bug"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('environment_mode = "separate"\n', "").replace('artifacts = ["/app"]\n', ""))
    outcome = run_trial(task, "adversary", agent_kwargs={"cheats": "reward"}, trials_dir=tmp_path / "trials")
    assert outcome.reward == 1.0, outcome

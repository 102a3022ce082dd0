"""Red team against grading: every bundled task, every cheat family of the validator's adversary.

The adversary (autoenv/agents/adversary.py) never solves the task. Its families:
``reward`` (forged and read-only reward files, a detached rewriter, a fork-hopping
rewriter, programs shadowed earlier on PATH, ``.pth``/``sitecustomize`` hooks that
make every Python exit 0), ``tests`` (rewritten test files, planted conftest.py and
pytest.py), ``outputs`` (empty outputs, exit-0 stubs) and ``peek`` (deliverable
programs that, when the tests run them, write reward.json and hand back the tests'
data files). Bundled tasks grade in a fresh sandbox (separate verifier mode) and run
the agent's code as nobody with /logs/verifier root-only, so none of it may reach the
reward. The controls show the same attacks win where either protection is missing.
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
    outcomes = asyncio.run(
        arun_many([(t, "adversary", {"cheats": family}) for t in tasks], n_concurrent=2, trials_dir=tmp_path)
    )
    forged = [(o.task, o.reward, o.error) for o in outcomes if o.reward != 0.0]
    assert not forged, forged
    cheats = [json.loads((Path(o.trial_dir) / "agent" / "adversary.json").read_text())["cheats"] for o in outcomes]
    # the reward and plant families apply everywhere; outputs only where the instruction names a file
    # the agent has not got yet (an output to fake), peek where it names a program the tests run
    applied = sum(bool(c) for c in cheats)
    # (tests only where test files ship in the image: none of the bundled tasks do that)
    # (inject where the agent has Python modules or the instruction names one: 7 of the 14)
    least = {"outputs": len(tasks) // 2, "peek": 5, "tests": 0, "inject": 7}.get(family, len(tasks))
    assert applied >= least, (family, applied, len(tasks))
    # a reader deliverable leaves a list of what it read in the verdict folder when it can write there
    peeked = [o.task for o in outcomes if (Path(o.trial_dir) / "verifier" / "autoenv-peek.txt").exists()]
    assert not peeked, peeked


def test_the_same_attacks_win_against_a_shared_mode_verifier(tmp_path):
    """The control: a shared-mode copy of a bundled task is beaten by the reward family alone."""
    import shutil

    from tests.conftest import EXAMPLE_TASKS

    task = tmp_path / "shared-fix-median-bug"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text().replace('environment_mode = "separate"\n', "").replace('artifacts = ["/app"]\n', "")
    )
    outcome = run_trial(task, "adversary", agent_kwargs={"cheats": "reward"}, trials_dir=tmp_path / "trials")
    assert outcome.reward == 1.0, outcome


#: The test.sh bundled tasks had before the tests ran as nobody: pytest as root, /logs/verifier left world-writable.
ROOT_TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
T=$(mktemp -d)
cp /tests/test_outputs.py /tests/agentcall.py "$T"/ && cd "$T" && \\
  python3 -I -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest "$T/test_outputs.py" -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""

#: In place of the broker: the agent's program run by plain subprocess, as the tests' own user (root here).
PLAIN_AGENTCALL = """\
import pathlib, subprocess, tempfile


def agent_folder(files=None, *, writable=False):
    folder = pathlib.Path(tempfile.mkdtemp())
    for rel, content in (files or {}).items():
        (folder / rel).write_bytes(content if isinstance(content, bytes) else str(content).encode())
    return folder


def read_agent_file(path):
    return pathlib.Path(path).read_text()


def run_agent(argv, *, cwd="/app", **kwargs):
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, **kwargs)
"""


def test_a_deliverable_forges_the_reward_when_root_tests_run_it(tmp_path):
    """The control for ``peek``: separate mode alone does not help when the tests run the agent's program as root.

    The reader stub the adversary writes for /app/logstats.py is run by the tests, writes reward.json (which
    Harbor reads before the reward.txt test.sh writes) and gets reward 1; the bundled task itself gives 0.
    """
    import shutil

    from tests.conftest import EXAMPLE_TASKS

    task = tmp_path / "root-tests-log-parser-cli"
    shutil.copytree(EXAMPLE_TASKS / "log-parser-cli", task)
    (task / "tests" / "test.sh").write_text(ROOT_TEST_SH)
    (task / "tests" / "agentcall.py").write_text(PLAIN_AGENTCALL)
    outcomes = asyncio.run(
        arun_many(
            [
                (task, "adversary", {"cheats": "peek"}),
                (EXAMPLE_TASKS / "log-parser-cli", "adversary", {"cheats": "peek"}),
            ],
            n_concurrent=2,
            trials_dir=tmp_path / "trials",
        )
    )
    assert [o.reward for o in outcomes] == [1.0, 0.0], outcomes
    assert (Path(outcomes[0].trial_dir) / "verifier" / "autoenv-peek.txt").exists()

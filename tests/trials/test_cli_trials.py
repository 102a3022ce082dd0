"""`autoenv trial/trials` from the command line on every bundled task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_TASKS, bundled_tasks, needs_namespaces

AUTOENV = str(Path(sys.executable).with_name("autoenv"))
pytestmark = needs_namespaces


@pytest.mark.slow
def test_autoenv_trials_passes_every_bundled_task_with_its_oracle(tmp_path):
    """`autoenv trials` over the bundled tasks folder, as a user runs a dataset: the reference solution passes every
    task (that doing nothing passes none is each bundled task's validation, tests/validate/test_corpus.py)."""
    out = subprocess.run(
        [AUTOENV, "trials", str(EXAMPLE_TASKS), "--agent", "oracle", "--json", "--trials-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout)
    assert [r for r in results if r["error"] is not None or r["reward"] != 1.0] == []
    assert sorted(r["task"] for r in results) == [t.name for t in bundled_tasks()]


def test_trials_json_and_table(tmp_path):
    source = EXAMPLE_TASKS / "fix-median-bug"
    out = subprocess.run(
        [
            AUTOENV,
            "trials",
            str(source),
            "--agent",
            "terminal",
            "--policy",
            "scripted",
            "--seed",
            "3",
            "-k",
            "4",
            "--ak",
            "success_rate=0.5",
            "--json",
            "--trials-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rewards = [o["reward"] for o in json.loads(out.stdout)]
    assert len(rewards) == 4 and set(rewards) == {0.0, 1.0}, (
        "seeds differ per attempt, so a 0.5 success rate mixes outcomes"
    )
    table = subprocess.run(
        [AUTOENV, "trials", str(EXAMPLE_TASKS / "csv-statistic"), "--agent", "oracle", "--trials-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert table.returncode == 0 and "passed 1/1" in table.stderr


def test_trial_on_a_non_task_folder_is_a_clear_error(tmp_path):
    """Exit 2: the task is wrong (here: not a task at all), not a negative verdict (1) or a backend limit (3)."""
    out = subprocess.run([AUTOENV, "trial", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "not a task folder" in out.stderr and "Traceback" not in out.stderr

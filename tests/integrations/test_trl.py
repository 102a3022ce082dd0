"""TRL's GRPOTrainer on autoenv's environment (issue 28): real training, real verifiers, and the red team's
attacks through the same path.

The trainer side runs in the training env (``.venv-train``: Python 3.11, torch, TRL), as a user's trainer would;
it reaches Harbor and autoenv through the bridge process (:mod:`autoenv.integrations.bridge`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from autoenv.train.trainenv import REPO_ROOT, train_env, train_python
from tests.conftest import EXAMPLE_TASKS, needs_namespaces, write_task
from tests.redteam.test_agent_code_in_judge import CHEATS, attack_script, in_process_median

TRAIN_PY = train_python(required=False)

pytestmark = [
    needs_namespaces,
    pytest.mark.skipif(TRAIN_PY is None, reason="training env missing: run `bash scripts/setup-train.sh`"),
]

MEDIAN = EXAMPLE_TASKS / "fix-median-bug"


def _in_train_env(script: Path, *args: str, stdin: str | None = None, timeout: float = 600) -> str:
    """Run ``script`` with the training env's Python, as a user's trainer runs; its stdout."""
    done = subprocess.run(
        [str(TRAIN_PY), str(script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=train_env(),
        cwd=REPO_ROOT,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def _probe(episodes: list[dict], trials: Path) -> list[dict]:
    out = _in_train_env(Path(__file__).with_name("trl_probe.py"), str(trials), stdin=json.dumps(episodes))
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_the_red_teams_cheats_get_nothing_through_the_trl_environment(tmp_path):
    """The agent's module ends the grading process, rewrites pytest's reports, reads the caller's frames: reward 0;
    the reference solution through the same tool: reward 1; doing nothing: 0."""
    solution = (MEDIAN / "solution" / "solve.sh").read_text()
    cheats = ["exit0", "reports", "frames"]
    episodes = [{"task_dir": str(MEDIAN), "commands": [attack_script(CHEATS[c])]} for c in cheats]
    episodes += [{"task_dir": str(MEDIAN), "commands": [solution]}, {"task_dir": str(MEDIAN), "commands": []}]
    results = _probe(episodes, tmp_path / "trials")
    assert len(results) == len(episodes)
    for cheat, result in zip(cheats, results):
        assert "CHEAT /app/stats_utils.py" in result["outputs"][0], result["outputs"]
        assert result["reward"] == 0.0, (cheat, result["verdict"])
        assert result["verdict"]["error"] is None, result["verdict"]
    assert results[-2]["reward"] == 1.0, results[-2]["verdict"]
    assert results[-1]["reward"] == 0.0
    for result in results:  # each reward is a real trial's verdict, graded in its own sandbox
        trial = Path(result["verdict"]["trial_dir"])
        reward = json.loads((trial / "result.json").read_text())["verifier_result"]["rewards"]["reward"]
        assert reward == result["reward"]


def test_a_task_that_grades_in_the_agents_sandbox_is_refused(tmp_path):
    """Shared-mode grading is what the red team forged: reset fails with a task error that says what to change."""
    task = write_task(tmp_path / "shared-mode")
    text = (task / "task.toml").read_text()
    assert "separate" not in text
    [result] = _probe([{"task_dir": str(task), "commands": []}], tmp_path / "trials")
    assert result["error"] == "task"
    assert 'environment_mode = "separate"' in result["message"]


def test_a_task_whose_tests_import_the_agents_code_is_refused(tmp_path):
    """The bridge refuses what validation refuses: tests that import the agent's module into pytest (where the
    red team's exit0 cheat wins, see the control in tests/redteam) fail reset with a task error that says why."""
    task = in_process_median(tmp_path / "median-in-process")
    [result] = _probe([{"task_dir": str(task), "commands": []}], tmp_path / "trials")
    assert result["error"] == "task"
    assert "decide its own reward" in result["message"] and "test_outputs.py:3" in result["message"]


@pytest.mark.slow
def test_grpo_trainer_trains_through_autoenvs_environment(tmp_path):
    """examples/trl_grpo.py: TRL's GRPOTrainer, TRL's HarborSpec with AutoenvBashEnv, two steps on a bundled task.

    Rewards are real verdicts (both 0 and 1 occur, each from a trial folder), and a step has reward variance and
    so a non-zero gradient."""
    out = _in_train_env(
        REPO_ROOT / "examples" / "trl_grpo.py", "--out", str(tmp_path / "run"), "--steps", "2", timeout=900
    )
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["cold_start"]["loss_last"] < summary["cold_start"]["loss_first"]
    rewards = [r["reward"] for r in summary["rollouts"]]
    assert len(rewards) == 8 and set(rewards) == {0.0, 1.0}, rewards
    assert any(step["grad_norm"] > 0 and step["reward_std"] > 0 for step in summary["steps"]), summary["steps"]
    for rollout in summary["rollouts"]:
        trial = Path(rollout["trial_dir"])
        result = json.loads((trial / "result.json").read_text())
        assert result["verifier_result"]["rewards"]["reward"] == rollout["reward"]
        assert (trial / "agent" / "commands.jsonl").is_file() or rollout["reward"] == 0.0
    assert (Path(summary["policy"]) / "config.json").is_file()

"""Calibration against solvers whose pass rate is known, on real trials."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autoenv.agents.coin import coin_flip
from autoenv.trials.runner import run_trial
from autoenv.validate.calibration import CalibrationSettings, cached_calibration, calibrate
from autoenv.validate.leakage import scan_extracted, task_secrets
from autoenv.validate.reward import proposer_reward
from autoenv.validate.validation import validate_task
from tests.conftest import needs_namespaces

HERE = Path(__file__).parent
GOOD = HERE / "good" / "sum-numbers"

pytestmark = [needs_namespaces, pytest.mark.slow]


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return Path(shutil.copytree(GOOD, tmp_path / "sum-numbers"))


def test_coin_solver_interval_covers_its_true_rate(task, tmp_path):
    """p = 0.5, K = 30, seed 0: the seeded coin passes 18 rollouts, and the 95% interval covers 0.5."""
    expected = sum(coin_flip(0.5, i) for i in range(30))
    report = calibrate(
        task, CalibrationSettings(solver="coin:p=0.5", rollouts=30, seed=0), trials_dir=tmp_path / "trials"
    )
    assert report.n == 30 and report.n_excluded == 0
    assert report.passes == expected == 18  # the trials did exactly what the coin said
    assert report.ci_low <= 0.5 <= report.ci_high
    assert report.pass_rate == pytest.approx(0.6)
    assert report.mean_turns == 1.0
    assert report.accepted, report.verdict
    again = calibrate(
        task, CalibrationSettings(solver="coin:p=0.5", rollouts=30, seed=0), trials_dir=tmp_path / "trials"
    )
    assert again.cached and again.passes == 18
    assert cached_calibration(task) is not None


def test_band_and_degenerate_solvers(task, tmp_path):
    easy = calibrate(task, CalibrationSettings(solver="oracle", rollouts=3), trials_dir=tmp_path / "trials")
    assert (easy.passes, easy.accepted) == (3, False) and "too easy" in easy.verdict
    hard = calibrate(task, CalibrationSettings(solver="nop", rollouts=2), trials_dir=tmp_path / "trials")
    assert (hard.passes, hard.accepted) == (0, False) and "too hard" in hard.verdict
    banded = calibrate(
        task, CalibrationSettings(solver="coin:p=0.5", rollouts=6, band=(0.9, 1.0)), trials_dir=tmp_path / "trials"
    )
    assert not banded.accepted and "too hard" in banded.verdict


def test_proposer_reward_from_real_verdicts(task, tmp_path):
    validation = validate_task(task, trials_dir=tmp_path / "trials")
    assert validation.valid, validation.feedback()
    assert proposer_reward(validation) == pytest.approx(0.2)
    accepted = calibrate(task, CalibrationSettings(solver="coin:p=0.5", rollouts=8), trials_dir=tmp_path / "trials")
    assert accepted.accepted and proposer_reward(validation, accepted) == 1.0
    too_easy = calibrate(task, CalibrationSettings(solver="oracle", rollouts=2), trials_dir=tmp_path / "trials")
    assert proposer_reward(validation, too_easy) == pytest.approx(0.2)


def test_leak_scan_agent_copies_the_environment_out(tmp_path):
    """The scan used for non-local backends, exercised on the local one (restricted to /app and /opt/reference: on this
    backend the rest of / is the host)."""
    task = Path(shutil.copytree(HERE / "flawed" / "solution-in-image", tmp_path / "solution-in-image"))
    outcome = run_trial(
        task,
        "autoenv.validate.leakage:ScanAgent",
        agent_kwargs={"roots": "/app,/opt/reference"},
        trials_dir=tmp_path / "trials",
    )
    assert outcome.error is None, outcome.error_message
    findings = scan_extracted(Path(outcome.trial_dir), task_secrets(task))
    assert [(f.kind, f.where) for f in findings] == [("solution_in_image", "/opt/reference/solve.sh")]

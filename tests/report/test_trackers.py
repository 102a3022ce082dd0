"""--report-to: each step's metrics in TensorBoard (as `tensorboard --logdir` serves them) and in trackio."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from autoenv.errors import MachineError
from autoenv.report import trackers
from autoenv.report.trackers import make_tracker
from autoenv.vocab import ReportTo
from tests.tracking import tensorboard_scalars

STEPS = [
    {"benchmark_score": 0.25, "useful_group_rate": 0.5, "proposer_valid_rate": 0.75, "loss": 1.5, "collect_sec": 3.0},
    {"benchmark_score": 0.5, "useful_group_rate": 1.0, "proposer_valid_rate": 1.0, "loss": 0.75, "collect_sec": 2.5},
    {"benchmark_score": 0.75, "useful_group_rate": 0.5, "proposer_valid_rate": 1.0, "loss": 0.5, "collect_sec": 2.0},
]


def test_tensorboard_serves_each_metric_as_a_curve_grouped_by_stage(tmp_path):
    pytest.importorskip("tensorboardX")
    tracker = make_tracker(ReportTo.TENSORBOARD, out_dir=tmp_path, run="main", config={"steps": 3})
    for step, metrics in enumerate(STEPS):
        tracker.log(step, metrics)
    tracker.close()
    curves = tensorboard_scalars(tmp_path / "tensorboard", "main")
    assert curves["solver/benchmark_score"] == [(0, 0.25), (1, 0.5), (2, 0.75)]
    assert curves["train/loss"] == [(0, 1.5), (1, 0.75), (2, 0.5)]
    assert {"solver/useful_group_rate", "proposer/proposer_valid_rate", "time/collect_sec"} <= set(curves)


def test_trackio_records_each_metric_per_step(tmp_path):
    pytest.importorskip("trackio")
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from autoenv.report.trackers import make_tracker\n"
        "from autoenv.vocab import ReportTo\n"
        "t = make_tracker(ReportTo.TRACKIO, out_dir=Path(sys.argv[1]), run='main', config={'steps': 3})\n"
        f"for step, metrics in enumerate({STEPS!r}):\n"
        "    t.log(step, metrics)\n"
        "t.close()\n"
        "from trackio.sqlite_storage import SQLiteStorage\n"
        "print(json.dumps(SQLiteStorage.get_logs('autoenv', 'main'), default=str))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRACKIO_DIR": str(tmp_path / "trackio"), "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    logs = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(row["step"], row["solver/benchmark_score"]) for row in logs] == [(0, 0.25), (1, 0.5), (2, 0.75)]
    assert [row["train/loss"] for row in logs] == [1.5, 0.75, 0.5]


def test_a_missing_tracker_package_is_a_clear_error_before_the_run(monkeypatch):
    monkeypatch.setitem(trackers._PACKAGES, ReportTo.TENSORBOARD, ("autoenv_no_such_module", "tensorboardX"))
    with pytest.raises(MachineError, match="pip install tensorboardX"):
        trackers.require(ReportTo.TENSORBOARD)
    trackers.require(ReportTo.NONE)

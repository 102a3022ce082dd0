"""Fixtures for the proposer tests: scratch output/workspace folders, quiet Harbor logs."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    return {"out": tmp_path / "out", "workspace": tmp_path / "workspace"}


@pytest.fixture(autouse=True)
def _quiet_harbor():
    from autoenv.trials.runner import quiet_harbor_logs

    quiet_harbor_logs()

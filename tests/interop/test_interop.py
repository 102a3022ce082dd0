"""Harbor interop both ways, and every Harbor environment selectable by name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.sandbox.backends import (
    DOCKER_IMPORT_PATH,
    LOCAL_IMPORT_PATH,
    UnknownBackend,
    backend_names,
    environment_config,
)
from autoenv.store.db import Store
from autoenv.taskfmt.hashing import task_hash
from tests.conftest import EXAMPLE_TASKS, needs_namespaces

BIN = Path(sys.executable).parent


def test_every_harbor_environment_is_selectable():
    from harbor.models.environment_type import EnvironmentType

    assert set(backend_names()) == {"local"} | {t.value for t in EnvironmentType}
    assert environment_config("local").import_path == LOCAL_IMPORT_PATH
    assert environment_config("docker").import_path == DOCKER_IMPORT_PATH  # Harbor's, with offline no-network
    assert environment_config("podman").type == EnvironmentType.PODMAN
    assert environment_config("modal").type == EnvironmentType.MODAL
    assert environment_config("my.module:Env").import_path == "my.module:Env"
    with pytest.raises(UnknownBackend, match="unknown environment 'dokcer'"):
        environment_config("dokcer")


def test_cli_rejects_unknown_environment():
    out = subprocess.run(
        [str(BIN / "autoenv"), "trial", str(EXAMPLE_TASKS / "fix-median-bug"), "--env", "dokcer"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "unknown environment" in out.stderr and "Traceback" not in out.stderr


@needs_namespaces
@pytest.mark.slow
def test_exported_dataset_runs_under_harbor_run(tmp_path):
    """Accepted tasks in the store -> export-harbor -> Harbor's own `harbor run`."""
    store = Store(tmp_path / "s.db")
    chosen = ["fix-median-bug", "csv-statistic"]
    for name in chosen:
        copy = tmp_path / "generated" / name
        shutil.copytree(EXAMPLE_TASKS / name, copy)
        store.upsert_task(
            hash=task_hash(copy), name=name, path=str(copy), method="feedback", valid=True, calibrated=True
        )
    store.upsert_task(
        hash="rejected", name="rejected", path=str(tmp_path / "nowhere"), method="prompt", valid=False, calibrated=False
    )
    store.close()
    dataset = tmp_path / "dataset"
    out = subprocess.run(
        [str(BIN / "autoenv"), "export-harbor", str(dataset), "--db", str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in dataset.iterdir()) == sorted(chosen)
    jobs = tmp_path / "jobs"
    run = subprocess.run(
        [
            str(BIN / "harbor"),
            "run",
            "-p",
            str(dataset),
            "-a",
            "oracle",
            "-e",
            LOCAL_IMPORT_PATH,
            "-n",
            "2",
            "-o",
            str(jobs),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads(next(jobs.glob("*/result.json")).read_text())
    stats = result["stats"]
    assert stats["n_completed_trials"] == 2 and stats["n_errored_trials"] == 0
    assert [m["mean"] for e in stats["evals"].values() for m in e["metrics"]] == [1.0]


def test_export_refuses_a_broken_task(tmp_path):
    broken = tmp_path / "src" / "broken"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", broken)
    (broken / "solution" / "solve.sh").unlink()
    out = subprocess.run(
        [str(BIN / "autoenv"), "export-harbor", str(tmp_path / "ds"), "--from", str(tmp_path / "src")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "not exportable" in out.stderr and "solve.sh" in out.stderr

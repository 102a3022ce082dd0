"""Harbor interop both ways, and every Harbor environment selectable by name."""

from __future__ import annotations

import json
import os
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
from tests.conftest import EXAMPLE_TASKS, REPO, needs_namespaces

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


@needs_namespaces
def test_a_written_trial_config_runs_harbors_own_trial_on_autoenvs_sandbox(tmp_path):
    """export-harbor --trial-config -> `harbor trial start -c` (Harbor's CLI and Trial): the oracle passes on
    autoenv's local environment, grading in a fresh sandbox; an agent that forges the reward gets 0 through it."""
    import yaml

    from autoenv.sandbox.local.environment import IMAGE_RECORD
    from tests.redteam.attacker import IMPORT_PATH

    src = tmp_path / "src"
    for name in ("csv-statistic", "fix-median-bug"):
        shutil.copytree(EXAMPLE_TASKS / name, src / name)
    dataset = tmp_path / "dataset"
    out = subprocess.run(
        [str(BIN / "autoenv"), "export-harbor", str(dataset), "--from", str(src), "--trial-config"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    config_file = dataset / "trial-config.yaml"
    config = yaml.safe_load(config_file.read_text())
    assert config["environment"] == {"import_path": LOCAL_IMPORT_PATH}, config

    def start(*extra: str) -> dict:
        trials = tmp_path / f"trials-{len(list(tmp_path.glob('trials-*')))}"
        run = subprocess.run(
            [str(BIN / "harbor"), "trial", "start", "-c", str(config_file), "--trials-dir", str(trials), *extra],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(REPO)},  # the red-team agent is loaded from this checkout
        )
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        trial = next(p for p in trials.iterdir() if p.is_dir())
        result = json.loads((trial / "result.json").read_text())
        result["sandboxes"] = json.loads((trial / IMAGE_RECORD).read_text())["sandboxes"]
        return result

    oracle = start()  # the config's own task (the first exported) and agent (oracle)
    assert oracle["verifier_result"]["rewards"]["reward"] == 1.0, oracle.get("exception_info")
    assert len(oracle["sandboxes"]) == 2, "the verifier did not grade in a sandbox of its own"
    forged = start(
        "-p",
        str(dataset / "fix-median-bug"),
        "--agent-import-path",
        IMPORT_PATH,
        "--agent-kwarg",
        "script=mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && echo 1 > /logs/verifier/reward.json",
    )
    assert forged["task_name"] == "fix-median-bug"
    assert (forged.get("verifier_result") or {}).get("rewards", {}).get("reward") == 0.0, forged

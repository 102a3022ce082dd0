"""Harbor's own Docker environment, for real: bundled tasks, validation, an exported dataset, attacks.

Needs a Docker daemon with Compose v2 and the bundled tasks' base image
(``scripts/docker-setup.sh`` sets all three up as root, offline). ``--env docker``
is Harbor's DockerEnvironment with one change: no-network tasks run with
Docker's ``network_mode: none`` where Harbor's egress sidecar cannot be pulled
(:mod:`autoenv.sandbox.docker`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.sandbox.backends import DOCKER_IMPORT_PATH
from autoenv.trials.runner import arun_many, run_trial
from autoenv.validate.validation import ValidationSettings, avalidate_task
from tests.conftest import EXAMPLE_TASKS, bundled_tasks, docker_problem, write_task

BIN = Path(sys.executable).parent


_why = docker_problem()
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.skipif(_why is not None, reason=f"{_why}")]


def test_every_bundled_task_passes_with_its_oracle_on_docker(tmp_path):
    """Every bundled task builds and grades its reference solution 1 on Docker (doing nothing is graded 0 on Docker
    in ``test_validate_on_docker``'s nop runs, and on the local backend for every task by its validation)."""
    tasks = bundled_tasks()
    # Docker trials mostly wait on compose; four at a time keeps two cores busy
    outcomes = asyncio.run(arun_many([(t, "oracle") for t in tasks], n_concurrent=4, env="docker", trials_dir=tmp_path))
    wrong = {o.task: (o.reward, o.error, (o.error_message or "")[-300:]) for o in outcomes if o.reward != 1.0}
    assert not wrong, wrong
    assert sorted(o.task for o in outcomes) == sorted(t.name for t in tasks)
    # each trial's containers were discarded (`compose down` without Docker's stop grace still removes them)
    projects = subprocess.run(
        ["docker", "ps", "-a", "--format", '{{.Label "com.docker.compose.project"}}'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    left = [p for p in projects if any(p.startswith(t.name.lower()) for t in tasks)]
    assert not left, left


def test_validate_on_docker(tmp_path):
    # a good task, and a weak one: the expected sum sits in /app/.meta/audit.log, which the leak scan (validation's
    # busybox, dot-folders read) copies out of the container
    weak = Path(__file__).parents[1] / "validate" / "reviewed" / "answer-in-audit-log"
    sources = [EXAMPLE_TASKS / "fix-median-bug", weak]
    copies = [Path(shutil.copytree(s, tmp_path / s.name, ignore=shutil.ignore_patterns(".autoenv"))) for s in sources]

    async def both():  # Docker trials mostly wait on compose: the validations at once, two trials each
        return await asyncio.gather(
            *(avalidate_task(c, ValidationSettings(env="docker"), trials_dir=tmp_path / "trials") for c in copies)
        )

    median, leaky = asyncio.run(both())
    assert median.valid, median.feedback()
    assert median.check("nop").passed is True, "doing nothing was tried on Docker, and got 0"
    assert [c.name for c in leaky.failed] == ["leakage"], leaky.feedback()
    assert "/app/.meta/audit.log:2" in leaky.feedback()


def test_exported_dataset_runs_under_harbor_run_on_docker(tmp_path):
    src = tmp_path / "src"
    for name in ("fix-median-bug", "log-parser-cli"):
        shutil.copytree(EXAMPLE_TASKS / name, src / name)
    dataset = tmp_path / "dataset"
    out = subprocess.run(
        [str(BIN / "autoenv"), "export-harbor", str(dataset), "--from", str(src)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
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
            DOCKER_IMPORT_PATH,
            "-n",
            "2",
            "-o",
            str(jobs),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    stats = json.loads(next(jobs.glob("*/result.json")).read_text())["stats"]
    assert stats["n_completed_trials"] == 2 and stats["n_errored_trials"] == 0
    assert [m["mean"] for e in stats["evals"].values() for m in e["metrics"]] == [1.0]


def test_no_network_is_enforced_on_docker(tmp_path):
    probe = (
        "#!/bin/bash\npython3 -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=3)\" "
        "&& echo online > /app/out.txt || echo hello > /app/out.txt\nls /sys/class/net >> /app/net.txt\n"
    )
    task = write_task(tmp_path / "tasks", "offline", solve=probe, env_extra='network_mode = "no-network"\n')
    outcome = run_trial(task, "oracle", env="docker", trials_dir=tmp_path / "trials")
    assert outcome.reward == 1.0, outcome


def test_adversary_cannot_win_a_bundled_task_on_docker(tmp_path):
    """The validator's adversary (every cheat class it knows) against bundled tasks on Docker: reward 0."""
    tasks = [EXAMPLE_TASKS / n for n in ("fix-median-bug", "variance-formulas-xlsx")]
    outcomes = asyncio.run(
        arun_many([(t, "adversary") for t in tasks], n_concurrent=2, env="docker", trials_dir=tmp_path)
    )
    assert all(o.reward == 0.0 for o in outcomes), [(o.task, o.reward, o.error) for o in outcomes]


def test_the_agents_module_cannot_decide_the_reward_on_docker(tmp_path):
    """The red team's in-judge cheats (tests/redteam/test_agent_code_in_judge.py) on Harbor's Docker environment:
    two bundled tasks whose tests call the agent's module get 0 from a module that exits 0 or rewrites pytest's
    reports, and the in-process control (the median task graded as it was before the broker) is forged by both."""
    from tests.redteam.attacker import IMPORT_PATH
    from tests.redteam.test_agent_code_in_judge import CHEATS, attack_script, in_process_median

    broker = [EXAMPLE_TASKS / n for n in ("fix-median-bug", "inventory-api-multi-tests")]
    control = in_process_median(tmp_path / "median-in-process")
    jobs = [
        (t, IMPORT_PATH, {"script": attack_script(CHEATS[c])}) for t in [*broker, control] for c in ("exit0", "reports")
    ]
    outcomes = asyncio.run(arun_many(jobs, n_concurrent=2, env="docker", trials_dir=tmp_path / "trials"))
    assert [(o.task, o.reward) for o in outcomes] == [
        ("fix-median-bug", 0.0),
        ("fix-median-bug", 0.0),
        ("inventory-api-multi-tests", 0.0),
        ("inventory-api-multi-tests", 0.0),
        ("median-in-process", 1.0),
        ("median-in-process", 1.0),
    ], [(o.task, o.reward, o.error, o.error_message) for o in outcomes]

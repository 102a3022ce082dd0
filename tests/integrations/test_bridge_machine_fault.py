"""A machine fault is never a reward (issue 38): GRPOTrainer sums reward functions with ``nansum``, so a NaN or a
0 for the machine's fault would train the policy on it. The TRL bridge raises :class:`BridgeError` instead.

Real trials through the real bridge, from the training env as a trainer runs it; the machine fault is a real runc
that stops being able to start containers after the agent's sandbox started (the verifier's sandbox cannot start).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autoenv.train.trainenv import REPO_ROOT, train_env, train_python
from tests.conftest import needs_namespaces, write_task
from tests.redteam.test_trial_bounds import TOML  # a separate verifier, /app its artifact, no network

TRAIN_PY = train_python(required=False)

pytestmark = [
    needs_namespaces,
    pytest.mark.slow,
    pytest.mark.skipif(TRAIN_PY is None, reason="training env missing: run `bash scripts/setup-train.sh`"),
]

#: answers like runc, but once ``{marker}`` exists cannot start a container
RUNC_THAT_BREAKS = """#!/bin/sh
if [ -e {marker} ]; then
  for arg in "$@"; do
    if [ "$arg" = run ]; then echo "runc: container_linux.go: starting container process caused: broken" >&2; exit 1; fi
  done
fi
exec {real} "$@"
"""


def _episodes(tmp_path: Path, episodes: list[dict]) -> list[dict]:
    marker = tmp_path / "runc-broken"
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "runc").write_text(RUNC_THAT_BREAKS.format(marker=marker, real=shutil.which("runc")))
    (shims / "runc").chmod(0o755)
    # no sandbox started ahead: the verifier's sandbox is started after the machine broke
    env = {**train_env(), "PATH": f"{shims}:{os.environ['PATH']}", "AUTOENV_SPARES": "0"}
    for episode in episodes:
        episode["break_machine"] = str(marker) if episode.pop("break", False) else ""
    done = subprocess.run(
        [str(TRAIN_PY), str(Path(__file__).with_name("trl_probe.py")), str(tmp_path / "trials")],
        input=json.dumps(episodes), capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_a_machine_fault_after_the_agent_raises_instead_of_a_reward(tmp_path):
    task = write_task(tmp_path / "tasks", "bridge-fault", files={"task.toml": TOML})
    # the control first: the same episode on a working machine is graded (the solved task: 1)
    control, broken = _episodes(
        tmp_path,
        [
            {"task_dir": str(task), "commands": ["echo hello > /app/out.txt"]},
            {"task_dir": str(task), "commands": ["echo hello > /app/out.txt"], "break": True},
        ],
    )
    assert control.get("reward") == 1.0, control
    assert "reward" not in broken, broken  # no number reached the trainer
    assert broken["reward_error"] == "sandbox" and "machine's fault" in broken["message"], broken
    assert "broken" in broken["message"], broken

"""The served path on CPU: each step's rollouts sample from the checkpoint the previous step trained.

A two-step flywheel with ``serve="cpu"``: the tiny policy v0 is built and served
(:mod:`autoenv.train.cpu_serve`, the training env), the solver is the shared
model at that endpoint (the terminal agent's OpenAI policy, recording token
ids and log-probs), the ``trl`` backend trains v1 from step 0's useful groups,
and the flywheel swaps the server to v1 before step 1. The tasks' verifiers
flip a coin, so groups have reward variance whatever the tiny model writes.

Proof that step 1 sampled from v1: every recorded log-prob of step 1 equals v1's
own log-prob of that token (teacher-forced in the training env), and differs
from v0's; step 0's match v0.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path

import pytest

from autoenv.flywheel.loop import Flywheel, FlywheelConfig
from autoenv.store.db import Store
from autoenv.train.trainenv import train_env, train_python
from autoenv.train.trajectories import trajectory_token_turns
from tests.conftest import needs_namespaces, write_task

TRAIN_PY = train_python(required=False)
pytestmark = [
    needs_namespaces,
    pytest.mark.slow,
    pytest.mark.skipif(TRAIN_PY is None, reason="training env missing: run `bash scripts/setup-train.sh`"),
]

COIN_TEST_SH = """\
#!/bin/bash
# a coin, so that every group has reward variance whatever the policy does
mkdir -p /logs/verifier
python3 -c "import random; print(random.SystemRandom().randint(0, 1))" > /logs/verifier/reward.txt
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_step_one_rolls_out_from_the_checkpoint_trained_at_step_zero(tmp_path):
    tasks = tmp_path / "tasks"
    for name in ("coin-a", "coin-b"):
        write_task(tasks, name, instruction=f"Task {name}: write anything you like.\n", test_sh=COIN_TEST_SH)
    store = Store(tmp_path / "fw.db")
    config = FlywheelConfig(
        run="served",
        steps=2,
        group_size=6,
        tasks_per_step=2,
        static_dir=tasks,
        benchmark_dir=None,
        seed_cases_dir=None,
        serve="cpu",
        serve_port=free_port(),
        n_concurrent=2,
        out_dir=tmp_path / "out",
        solver="terminal:policy=openai,max_turns=1,max_tokens=12,temperature=1.0",
        trainer="trl:base=tiny,lr=1e-3,steps=2,seed=0",
    )
    events: list[tuple[str, dict]] = []
    flywheel = Flywheel(config, store, progress=lambda e, d: events.append((e, d)))
    assert (
        flywheel.spec.kwargs["base_url"] == f"http://127.0.0.1:{config.serve_port}/v1"
        and flywheel.spec.kwargs["model"] == "policy"
    )
    reports = asyncio.run(flywheel.run())

    assert [(r.policy_version_in, r.policy_version_out) for r in reports] == [(0, 1), (1, 2)], (
        f"step 0 must train a new version (useful groups: {reports[0].useful_groups})"
    )
    served = [d["version"] for e, d in events if e == "serve" and "version" in d]
    assert served[:2] == [0, 1], served
    train = tmp_path / "out" / "served" / "train"
    assert (train / "v1" / "config.json").is_file() and (train / "v2" / "config.json").is_file()

    turns_by_step: dict[int, list[dict]] = {0: [], 1: []}
    for row in store.rollouts("served"):
        assert row["policy_version"] == row["step"], "the store labels each rollout with the version it sampled from"
        trajectory = json.loads(Path(row["trajectory_path"]).read_text())
        versions = {
            (s.get("extra") or {}).get("policy_version") for s in trajectory["steps"] if s.get("source") == "agent"
        }
        assert versions == {str(row["step"])}, (
            f"the server's x-policy-version header says which weights answered: {versions}"
        )
        turns = trajectory_token_turns(trajectory)
        assert turns and all(t.logprobs for t in turns), "the served policy returns token ids and log-probs"
        turns_by_step[row["step"]] += [t.model_dump() for t in turns]

    diffs = {}
    for step, turns in turns_by_step.items():
        path = tmp_path / f"turns-{step}.json"
        path.write_text(json.dumps(turns))
        run = subprocess.run(
            [
                str(TRAIN_PY),
                str(Path(__file__).with_name("served_checks.py")),
                "--turns",
                str(path),
                str(train / "v0"),
                str(train / "v1"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=train_env(),
        )
        assert run.returncode == 0, run.stderr[-3000:]
        diffs[step] = json.loads(run.stdout.splitlines()[-1])["max_abs_diff"]
    assert diffs[0]["v0"] < 1e-3 < diffs[0]["v1"], diffs
    assert diffs[1]["v1"] < 1e-3 < diffs[1]["v0"], f"step 1 sampled from v1, not v0: {diffs}"

    # the batches trained on exactly those tokens
    batch = (train / "batches" / "step-00000.jsonl").read_text().splitlines()
    samples = [json.loads(line) for line in batch[1:]]
    assert samples and all(s["role"] == "solver" and s.get("turns") for s in samples)

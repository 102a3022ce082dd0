"""A terminal agent's trajectory replayed as a reference solution (``autoenv.agents.replay``, issue 40).

The trajectory is written by the agent's own recorder (Harbor's ATIF models); the script it becomes is run by a
real ``bash`` in a scratch folder, so what is checked is what a verifier would see the replay leave behind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from harbor.models.trajectories import Agent, Observation, ObservationResult, ToolCall

from autoenv.agents.replay import TERMINAL_AGENT, solution_from_trajectory
from autoenv.agents.trajectory import TRAJECTORY_JSON, TrajectoryRecorder
from tests.conftest import needs_namespaces

TRICKY = "quotes ' \" $HOME `x` \\ and a newline\nünïcödé, no final newline"


def _record(logs: Path, turns: list[list[tuple[str, dict, str | None]]], agent: str = TERMINAL_AGENT) -> Path:
    """A trajectory of ``turns``: each a list of (tool, arguments, error of its result or None for no result)."""
    recorder = TrajectoryRecorder(logs, agent=Agent(name=agent, version="test"))
    for n, turn in enumerate(turns):
        calls = [ToolCall(tool_call_id=f"c{n}-{i}", function_name=t, arguments=a) for i, (t, a, _) in enumerate(turn)]
        results = [
            ObservationResult(source_call_id=f"c{n}-{i}", content="...", extra={"error": e} if e else {"exit_code": 0})
            for i, (_, _, e) in enumerate(turn)
            if e != "not run"
        ]
        recorder.add(source="agent", message="", tool_calls=calls, observation=Observation(results=results))
    recorder.flush()
    return logs / TRAJECTORY_JSON


def _run(script: str, workdir: Path) -> subprocess.CompletedProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["bash", "-c", script], cwd=workdir, capture_output=True, text=True, timeout=30)


def test_the_replay_does_what_the_agent_did_in_order(tmp_path):
    work = tmp_path / "app"
    trajectory = _record(
        tmp_path / "agent",
        [
            [("run", {"command": "mkdir -p sub && cd sub && touch inside"}, None), ("read_file", {"path": "x"}, None)],
            # a failing command does not stop the replay; the cd above did not carry over (a fresh shell each time)
            [("run", {"command": "false"}, None), ("run", {"command": "pwd > where.txt"}, None)],
            [("write_file", {"path": "out/deep/tricky.txt", "content": TRICKY}, None)],
            # what the agent was told was invalid, and a call the time limit cut off, ran nothing
            [("run", {"command": "touch invalid"}, "invalid_action"), ("run", {"command": "touch cut"}, "not run")],
            [("finish", {"message": "done"}, None), ("run", {"command": "touch after-finish"}, None)],
        ],
    )
    script = solution_from_trajectory(trajectory)
    assert script is not None and script.startswith("#!/bin/bash\n")
    done = _run(script, work)
    assert done.returncode == 0, done.stderr
    assert (work / "sub" / "inside").is_file()
    assert (work / "where.txt").read_text().strip() == str(work)
    assert (work / "out" / "deep" / "tricky.txt").read_bytes() == TRICKY.encode()
    assert sorted(p.name for p in work.iterdir()) == ["out", "sub", "where.txt"]


def test_what_cannot_be_replayed_gives_no_script(tmp_path):
    # another agent's tool calls mean other things; reads alone change nothing; a file that is not a trajectory
    other = _record(tmp_path / "other", [[("run", {"command": "touch x"}, None)]], agent="claude-code")
    assert solution_from_trajectory(other) is None
    reads = _record(tmp_path / "reads", [[("read_file", {"path": "/app/x"}, None), ("finish", {}, None)]])
    assert solution_from_trajectory(reads) is None
    (tmp_path / "junk.json").write_text("{not json")
    assert solution_from_trajectory(tmp_path / "junk.json") is None
    assert solution_from_trajectory(tmp_path / "missing.json") is None
    assert json.loads(other.read_text())["agent"]["name"] == "claude-code"  # the recorder wrote what was checked


@needs_namespaces
@pytest.mark.slow
def test_an_attempt_that_does_not_replay_is_not_made_the_reference(make_task, tmp_path, replay, api_key):
    """A model (on loopback) solves a task that ships no solution, but its command behaves otherwise when replayed
    (it looks for /solution, where the oracle puts the replay): the attempt shows the task solvable, the replay's
    failure is said, and the checks that rerun a solution stay "not run" instead of failing the task."""
    from chat_server import MODEL, completion

    from autoenv.validate.validation import ValidationSettings, validate_task

    test_sh = (
        '#!/bin/bash\nmkdir -p /logs/verifier\nif [ "$(cat /app/out.txt 2>/dev/null)" = "agent" ]; then echo 1; '
        "else echo 0; fi > /logs/verifier/reward.txt\n"
    )
    task = make_task("replays-otherwise", instruction="Write the word agent to /app/out.txt.\n", test_sh=test_sh)
    shutil.rmtree(task / "solution")
    command = "if test -d /solution; then echo replayed; else echo agent; fi > /app/out.txt"
    server = replay(
        [
            {"response": completion(1, calls=[("run", {"command": command})])},
            {"response": completion(2, calls=[("finish", {"message": "done"})])},
        ]
    )
    spec = f"terminal:policy=openai,model={MODEL},base_url={server.url},retry_base_sec=0.01"
    report = validate_task(
        task, ValidationSettings(oracle=False, oracle_agent=spec, oracle_attempts=1), trials_dir=tmp_path / "trials"
    )
    oracle = report.check("oracle")
    assert oracle.passed is True and "solved it in attempt 1 of 1" in oracle.summary, oracle.summary
    reference = oracle.evidence["reference"]
    assert "replayed as a script did not pass" in reference["not_used"] and "replayed" not in reference, reference
    assert command in Path(reference["script"]).read_text()
    for name in ("deterministic", "partial"):
        assert report.check(name).passed is None, report.check(name).summary
    assert server.problems == [] and server.served == 2

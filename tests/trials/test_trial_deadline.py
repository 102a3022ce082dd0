"""A trial always ends: one that outlives its own timeouts is cancelled, and keeps its verdict when it had one.

Harbor times each phase of a trial, but not what lies between them: its teardown (``docker compose down``) has no
timeout, and a CI run once saw a trial that never ended. Each trial here runs for real on the local backend, with
an environment whose teardown never returns (:mod:`tests.trials.hanging_env`), in a child process (what a hung
trial leaves must not outlive the test)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autoenv.trials.attribution import ErrorKind, Party, party
from tests.conftest import REPO, needs_namespaces, write_task

pytestmark = [needs_namespaces, pytest.mark.slow]

#: longer than the trial takes on a loaded machine (a few seconds alone)
DEADLINE_SEC = 60.0

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from autoenv.trials.runner import arun_trial, run_bounded
    from tests.trials.hanging_env import IMPORT_PATH

    async def both():
        runs = [arun_trial(task, "oracle", env=IMPORT_PATH, trials_dir=sys.argv[3], deadline_sec=float(sys.argv[4]))
                for task in sys.argv[1:3]]
        return await asyncio.gather(*runs)

    print(json.dumps([outcome.model_dump() for outcome in run_bounded(both())]))
    """
)

SEPARATE = """\
schema_version = "1.4"
[metadata]
author_name = "autoenv-tests"
[verifier]
timeout_sec = 30.0
environment_mode = "separate"
[agent]
timeout_sec = 30.0
[environment]
build_timeout_sec = 120.0
"""


def test_a_trial_whose_teardown_never_returns_ends_at_its_deadline(tmp_path):
    """Two trials at once. Where the verifier shares the agent's sandbox, the verdict is in before the teardown
    hangs: cancelled at the deadline, the trial ends with its verdict. Where the verifier has a sandbox of its own,
    its teardown hangs before the trial's result is complete: the trial ends as ``hung``, the agent's failure,
    saying where it was. Both within the deadline and the grace after it, and nothing keeps the child alive."""
    shared = write_task(tmp_path / "tasks", "shared")
    separate = write_task(tmp_path / "tasks", "separate", files={"task.toml": SEPARATE})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(shared), str(separate), str(tmp_path / "trials"), str(DEADLINE_SEC)],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    kept, hung = json.loads(done.stdout.strip().splitlines()[-1])
    assert kept["error"] is None and kept["reward"] == 1.0, kept
    assert hung["error"] == ErrorKind.HUNG and hung["reward"] == 0.0, hung
    assert party(hung["error"]) is Party.AGENT
    why = hung["error_message"]
    assert f"within its deadline ({DEADLINE_SEC:g} s)" in why and "it was at: the verifier" in why, why
    # the deadline, the grace a cancelled trial gets, the grace its leftovers get, and the interpreter's start
    assert seconds < DEADLINE_SEC + 30 + 30 + 60, seconds
    assert DEADLINE_SEC <= hung["duration_sec"] < DEADLINE_SEC + 30 + 10, hung


def test_a_trial_its_caller_cancels_winds_up_before_the_call_ends(tmp_path):
    """``asyncio.wait_for(arun_trial(...))`` past its time: by the time it raises, the trial's sandbox has been
    stopped (Harbor's teardown ran within the grace), not left running behind a call that has returned."""
    from autoenv.sandbox.backend import IMAGE_RECORD
    from autoenv.trials.runner import arun_trial, run_bounded
    from tests.redteam.attacker import IMPORT_PATH

    task = write_task(tmp_path / "tasks", "slow", agent_timeout=120.0)
    trials = tmp_path / "trials"

    async def cancelled() -> list[str]:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(
                arun_trial(task, IMPORT_PATH, agent_kwargs={"script": "sleep 100"}, trials_dir=trials), timeout=20
            )
        records = list(trials.glob(f"*/{IMAGE_RECORD}"))
        assert records, "the trial started no sandbox within 20 s"
        sandboxes = json.loads(records[0].read_text())["sandboxes"]
        return [name for name in sandboxes if _init_alive(name)]

    assert run_bounded(cancelled()) == []


def _init_alive(sandbox: str) -> bool:
    from autoenv.sandbox.local.cache import cache_root

    try:
        pid = int((cache_root() / "sandboxes" / sandbox / "init.pid").read_text())
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return False
    return state not in ("Z", "X")  # a dead init not yet reaped is dead

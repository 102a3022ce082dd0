"""Red team: an agent that leaves something huge behind gets 0, in bounded time, without touching the host.

Issue 38: one command of an exploring policy (a 20 GB sparse file in ``/app``) made the harness grow by 1 GB every
10 s until the OOM killer ended it. Each test runs a real trial (separate verifier, ``/app`` collected as an
artifact), on the local backend and on Docker (a real daemon: ``docker cp``'s stream within the same bounds), in a
child process whose peak memory is measured, with an agent that first solves the task and
then leaves one of the things the issue names. The verdict must be 0 with a reason naming the bound, the trial
must end within its timeouts plus a margin, the harness must stay under 1 GB, and the host's disk must be back
where it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autoenv.sandbox.docker import DISK_BOUND_FIX, disk_bound_problem
from autoenv.sandbox.local.cache import cache_root
from tests.conftest import docker_problem, needs_namespaces, write_task

pytestmark = [pytest.mark.slow]

BACKENDS = [
    pytest.param("local", marks=needs_namespaces),
    pytest.param(
        "docker",
        marks=[
            pytest.mark.docker,
            pytest.mark.skipif(docker_problem() is not None, reason=f"Docker backend: {docker_problem()}"),
        ],
    ),
]

REPO = Path(__file__).resolve().parents[2]

TOML = """\
schema_version = "1.4"
artifacts = ["/app"]
[metadata]
author_name = "autoenv-tests"
[verifier]
environment_mode = "separate"
timeout_sec = 60.0
[agent]
timeout_sec = 120.0
[environment]
build_timeout_sec = 120.0
network_mode = "no-network"
"""

SOLVE = "echo hello > /app/out.txt\n"

#: run one trial in a fresh interpreter and report its outcome and that interpreter's peak memory
CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from tests.redteam.watchdog import dump_stacks_after
    dump_stacks_after(float(sys.argv[5]))
    from autoenv.trials.runner import run_trial
    from tests.redteam.attacker import IMPORT_PATH
    outcome = run_trial(
        sys.argv[1], IMPORT_PATH, agent_kwargs={"script": sys.argv[2]}, trials_dir=sys.argv[3], env=sys.argv[4]
    )
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome.model_dump(), "peak_mb": peak_kb / 1024}))
    """
)


def _disk_used() -> int:
    # the local backend's sandboxes and Docker's data root are on the host's disk (one filesystem here; the
    # larger of the two changes is what counts where they are not)
    return max(_used(cache_root()), _used(Path("/var/lib/docker")))


def _used(path: Path) -> int:
    while not path.exists():
        path = path.parent
    usage = shutil.disk_usage(path)
    return usage.total - usage.free


def _trial(tmp_path: Path, script: str, env: str) -> tuple[dict, float, float]:
    task = write_task(tmp_path / "tasks", "bounded", files={"task.toml": TOML})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(task), SOLVE + script, str(tmp_path / "trials"), env, str(CHILD_LIMIT)],
        capture_output=True, text=True, cwd=REPO, timeout=CHILD_LIMIT + 60,
    )  # fmt: skip
    assert done.returncode == 0, (done.stderr[-6000:], _trial_logs(tmp_path / "trials"))
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["outcome"], report["peak_mb"], time.monotonic() - started


#: a trial that has not ended by then prints where it waits (every asyncio task's stack) and exits: the agent's
#: 120 s, the verifier's 60 s and the build's 120 s with room to spare, and under pytest-timeout's 600 s
CHILD_LIMIT = 420


def _trial_logs(trials: Path) -> str:
    """The tail of each trial's own log (Harbor's trial.log), for a child that failed."""
    return "\n".join(f"{log}:\n{log.read_text(errors='replace')[-4000:]}" for log in sorted(trials.glob("*/trial.log")))


def _attack_log(outcome: dict) -> str:
    path = Path(outcome["trial_dir"]) / "agent" / "attack.txt"
    return path.read_text() if path.exists() else ""


TEN_GB = "fallocate -l 10G /app/big; echo fallocate10=$?; rm -f /app/big"
THREE_GB = "fallocate -l 3G /app/big; echo ok=$?"


@pytest.mark.parametrize(
    "what, script, bound",
    [
        ("a 20 GB sparse file", "truncate -s 20G /app/big && ls -ls /app/big", "MiB"),
        # 10 GB does not fit the sandbox's disk (ENOSPC inside); 3 GB of allocated blocks does, and reads as zeros
        ("a 10 GB real file", f"{TEN_GB}; {THREE_GB}", "MiB"),
        ("150,000 files", "mkdir /app/many && cd /app/many && seq 1 150000 | xargs touch && ls | wc -l", "files"),
    ],
)
@pytest.mark.parametrize("env", BACKENDS)
def test_what_the_agent_leaves_cannot_exhaust_the_host(tmp_path, env, what, script, bound):
    # without a bound on the writable layer (this daemon: overlay2 on ext4), 10 GB written in the sandbox is 10 GB of
    # the host's disk while the trial lasts: the host needs the room, and the bound inside is not there to test
    unbounded = env == "docker" and disk_bound_problem() is not None
    if unbounded and "real file" in what:
        # no bound inside to test: only the 3 GB the harness must not copy out. Writing 10 GB more to the host's
        # disk, beside the other CI worker's tests, once gave a trial that never ended (in CI; the cause was not
        # seen: the child's watchdog now prints where it waits)
        script = THREE_GB
        if shutil.disk_usage("/var/lib/docker").free < 10 << 30:
            pytest.skip(f"this Docker daemon has no disk bound per sandbox and under 10 GB free; {DISK_BOUND_FIX}")
    before = _disk_used()
    outcome, peak_mb, seconds = _trial(tmp_path, script, env)
    log = _attack_log(outcome)
    assert outcome["reward"] == 0.0, (what, outcome, log)
    assert outcome["error"] == "agent_limit" and bound in outcome["error_message"], (what, outcome)
    if "10 GB" in what and not unbounded:
        assert "fallocate10=0" not in log and "ok=0" in log, log  # the disk bound said no inside the sandbox
    # the agent's 120 s and the verifier's 60 s are the timeouts; the trial ends well inside them
    assert seconds < 120, (what, seconds)
    assert peak_mb < 1024, (what, peak_mb)
    # the sandboxes' writable layers are removed in the background within seconds of the trial's end
    deadline = time.monotonic() + 30
    while _disk_used() - before > 512 << 20 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _disk_used() - before < 512 << 20, (what, (_disk_used() - before) >> 20)

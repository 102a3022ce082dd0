"""The local backend as Harbor sees it: real trials, real runc containers, real processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
from harbor.trial.trial import Trial

from autoenv.sandbox.backends import LOCAL_IMPORT_PATH
from autoenv.trials.runner import run_trial
from tests.conftest import REPO, needs_namespaces, write_task

pytestmark = needs_namespaces


def _pids_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_oracle_and_nop_rewards(make_task, trials_dir):
    task = make_task()
    assert run_trial(task, "oracle", trials_dir=trials_dir).reward == 1.0
    nop = run_trial(task, "nop", trials_dir=trials_dir)
    assert nop.reward == 0.0 and nop.error is None


def test_harbor_trial_api_runs_task_with_our_environment_by_import_path(make_task, trials_dir):
    """Harbor's own Trial, told only the import path, drives the local environment."""
    task = make_task()
    config = TrialConfig(
        task=TaskConfig(path=task),
        trials_dir=trials_dir,
        agent=AgentConfig(name="oracle"),
        environment=EnvironmentConfig(import_path=LOCAL_IMPORT_PATH),
    )

    async def go():
        trial = await Trial.create(config)
        return await trial.run()

    result = asyncio.run(go())
    assert result.exception_info is None
    assert result.verifier_result.rewards["reward"] == 1.0


def test_harbor_cli_runs_task_with_our_environment(make_task, trials_dir):
    task = make_task()
    harbor = Path(sys.executable).with_name("harbor")
    out = subprocess.run(
        [
            str(harbor),
            "trial",
            "start",
            "-p",
            str(task),
            "-a",
            "oracle",
            "-e",
            LOCAL_IMPORT_PATH,
            "--trials-dir",
            str(trials_dir),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "'reward': 1.0" in out.stdout


def test_agent_timeout_kills_every_process(make_task, trials_dir):
    marker = str(4000 + uuid.uuid4().int % 5000)
    solve = f"""#!/bin/bash
setsid sleep 7{marker} </dev/null >/dev/null 2>&1 &
sleep 8{marker} &
sleep 9{marker}
"""
    task = make_task("sleepy", solve=solve, agent_timeout=3.0)
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.error == "agent_timeout", outcome
    assert outcome.duration_sec < 60
    for prefix in "789":
        assert _pids_with(f"sleep {prefix}{marker}") == [], f"leftover sleep {prefix}{marker}"


def test_paths_env_user_and_isolation(make_task, trials_dir, tmp_path):
    """Dockerfile WORKDIR/ENV/COPY are honoured, the host is untouched, users switch."""
    probe = """#!/bin/bash
set -e
cd /app
{
  echo "pwd=$(pwd)"
  echo "greeting=$GREETING"
  echo "data=$(cat /app/data/input.txt)"
  echo "nobody=$(setpriv --reuid=nobody --regid=nogroup --clear-groups id -u)"
  echo "hostfile=$(test -e /etc/autoenv-probe && echo yes || echo no)"
  echo "ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')"
} > /app/probe.txt
echo touched > /etc/autoenv-probe
echo hello > /app/out.txt
"""
    task = make_task(
        "probe",
        dockerfile='FROM python:3.12-slim\nARG WHO=world\nENV GREETING="hi ${WHO}"\nWORKDIR /app\nCOPY data '
        "/app/data\n",
        solve=probe,
        env_extra='network_mode = "no-network"\n',
        files={"environment/data/input.txt": "payload\n"},
        test_sh="#!/bin/bash\nmkdir -p /logs/verifier\ncp /app/probe.txt /logs/verifier/probe.txt\necho 1 > "
        "/logs/verifier/reward.txt\n",
    )
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.reward == 1.0, outcome
    probe_out = dict(
        line.split("=", 1) for line in (Path(outcome.trial_dir) / "verifier" / "probe.txt").read_text().splitlines()
    )
    assert probe_out["pwd"] == "/app"
    assert probe_out["greeting"] == "hi world"
    assert probe_out["data"] == "payload"
    assert probe_out["nobody"] == "65534"
    assert probe_out["hostfile"] == "no"
    assert probe_out["ifaces"].split() == ["lo"], (
        "allow_internet=false must give a network namespace with only loopback"
    )
    assert not Path("/etc/autoenv-probe").exists(), "sandbox writes must not reach the host"


def test_task_sources_are_hidden_from_the_agent(trials_dir):
    """The agent must not find the solution or tests by walking the host tree."""
    root = REPO / "runs" / f"mask-test-{uuid.uuid4().hex[:6]}"
    try:
        task = write_task(
            root,
            "masked",
            solve="#!/bin/bash\n"
            f"if ls {root}/masked/solution >/dev/null 2>&1; then echo leak > /app/out.txt; else echo hello > "
            f"/app/out.txt; fi\n",
        )
        assert run_trial(task, "oracle", trials_dir=trials_dir).reward == 1.0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_memory_limit_is_enforced(make_task, trials_dir):
    solve = """#!/bin/bash
python3 -c "x = bytearray(1024*1024*1024)" 2>/dev/null && echo allocated > /app/out.txt || echo hello > /app/out.txt
"""
    task = make_task("memcap", solve=solve, env_extra="memory_mb = 256\n")
    assert run_trial(task, "oracle", trials_dir=trials_dir).reward == 1.0


def test_sandbox_root_is_removed_after_trial(make_task, trials_dir):
    from autoenv.sandbox.local.image import cache_root

    before = set(os.listdir(cache_root() / "sandboxes")) if (cache_root() / "sandboxes").exists() else set()
    task = make_task("cleanup")
    run_trial(task, "oracle", trials_dir=trials_dir)
    # the trial waits for its sandboxes' processes to end, and leaves the removal to their reapers
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        after = set(os.listdir(cache_root() / "sandboxes"))
        if not {n for n in after - before if n.startswith("cleanup__")}:
            break
        time.sleep(0.05)
    assert not {n for n in after - before if n.startswith("cleanup__")}
    assert not [m for m in Path("/proc/mounts").read_text().splitlines() if "/sandboxes/cleanup__" in m]


def test_sandbox_dies_with_a_killed_autoenv(tmp_path):
    """A SIGKILLed autoenv process must not leave its sandbox running."""
    import signal
    import time

    task = write_task(tmp_path / "tasks", "killed")
    state = tmp_path / "sb"
    code = (
        "import asyncio, sys, time\n"
        "from pathlib import Path\n"
        "from harbor.environments.definition import environment_content_hash\n"
        "from autoenv.sandbox.local.container import Container, ContainerConfig\n"
        "from autoenv.sandbox.local.image import build_image\n"
        f"env_dir = Path({str(task / 'environment')!r})\n"
        "image = asyncio.run(build_image(env_dir, key=environment_content_hash(env_dir)))\n"
        f"c = Container('killed-{uuid.uuid4().hex[:6]}', Path({str(state)!r}), ContainerConfig(rootfs=image.rootfs, "
        f"env={{}}))\n"
        "c.start()\n"
        "print(c.processes()[0], flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO)
    pid1 = int(proc.stdout.readline())
    assert Path(f"/proc/{pid1}").exists()
    assert any(str(state) in line for line in Path("/proc/mounts").read_text().splitlines())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while (Path(f"/proc/{pid1}").exists() or state.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid1}").exists(), "sandbox init survived its parent"
    assert not state.exists(), "the sandbox's writable layer was left behind"
    assert not any(str(state) in line for line in Path("/proc/mounts").read_text().splitlines()), (
        "a mount was left behind"
    )


def test_task_root_is_not_root_over_the_sandbox(make_task, trials_dir):
    """Docker's default capabilities: no mount/umount of the masks, no host disks, private /dev/shm."""
    marker = f"shm-{uuid.uuid4().hex[:8]}"
    Path(f"/dev/shm/{marker}").write_text("host")
    try:
        probe = f"""#!/bin/bash
{{
  mount -t tmpfs tmpfs /mnt 2>/dev/null && echo "mount=yes" || echo "mount=no"
  echo "disks=$(ls /dev | grep -cE '^(vd|sd|nvme|xvd)')"
  test -e /dev/shm/{marker} && echo "shm=shared" || echo "shm=private"
  echo "nobody=$(su -s /bin/sh nobody -c 'id -u' 2>/dev/null || setpriv --reuid=65534 --regid=65534 --clear-groups id -u)"
}} > /app/caps.txt
echo hello > /app/out.txt
"""  # noqa: E501
        task = make_task(
            "caps",
            solve=probe,
            test_sh="#!/bin/bash\nmkdir -p /logs/verifier\ncp /app/caps.txt /logs/verifier/caps.txt\necho 1 > "
            "/logs/verifier/reward.txt\n",
        )
        outcome = run_trial(task, "oracle", trials_dir=trials_dir)
        assert outcome.reward == 1.0, outcome
        seen = dict(
            line.split("=", 1) for line in (Path(outcome.trial_dir) / "verifier" / "caps.txt").read_text().splitlines()
        )
        assert seen["mount"] == "no"
        assert seen["disks"] == "0"
        assert seen["shm"] == "private"
        assert seen["nobody"] == "65534"
    finally:
        Path(f"/dev/shm/{marker}").unlink(missing_ok=True)


@pytest.mark.skipif(shutil.which("runsc") is None, reason="runsc (gVisor) is not installed")
def test_gvisor_runtime_runs_no_network_tasks_and_refuses_networked_ones(make_task, trials_dir):
    probe = "#!/bin/bash\ndmesg | grep -q gVisor && echo hello > /app/out.txt\n"
    task = make_task("gvisor", solve=probe, env_extra='network_mode = "no-network"\n')
    outcome = run_trial(task, "oracle", trials_dir=trials_dir, env_kwargs={"runtime": "runsc"})
    assert outcome.reward == 1.0, outcome
    assert run_trial(task, "nop", trials_dir=trials_dir, env_kwargs={"runtime": "runsc"}).reward == 0.0
    networked = make_task("gvisor-net", env_extra='network_mode = "public"\n')
    refused = run_trial(networked, "oracle", trials_dir=trials_dir, env_kwargs={"runtime": "runsc"})
    assert refused.error == "sandbox" and "no-network" in refused.error_message

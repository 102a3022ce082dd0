"""Red team: a policy that is root in its sandbox attacks the local backend for real.

Each test runs a real trial on the local backend with an attacking agent loaded
by import path (or a Dockerfile that attacks during the build) and asserts:
no file changed on the host, the reward is not 1, nothing is left running and
no mount is left behind. One test per attack class of issue 12.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from autoenv.sandbox.local.environment import IMAGE_RECORD
from autoenv.sandbox.local.image import cache_root
from autoenv.sandbox.local.oci import DEFAULT_PIDS_LIMIT
from autoenv.trials.runner import TrialOutcome, run_trial
from tests.conftest import needs_namespaces, write_task
from tests.redteam.attacker import IMPORT_PATH

pytestmark = needs_namespaces

# Docker's default capability set as a CapEff mask (chown .. setfcap, no CAP_SYS_ADMIN)
DOCKER_CAP_MASK = 0xA80425FB
CAP_SYS_ADMIN = 1 << 21


def attack(tmp_path: Path, script: str, *, name: str = "victim", **task_kwargs) -> TrialOutcome:
    task = write_task(tmp_path / "tasks", name, **task_kwargs)
    return run_trial(task, IMPORT_PATH, agent_kwargs={"script": script}, trials_dir=tmp_path / "trials")


def attack_log(outcome: TrialOutcome) -> str:
    path = Path(outcome.trial_dir) / "agent" / "attack.txt"
    return path.read_text() if path.exists() else ""


def assert_contained(outcome: TrialOutcome) -> None:
    """Reward not 1; within seconds of the trial's end (sandboxes are removed in the background) no process,
    cgroup, mount or folder of either of its sandboxes is left."""
    assert outcome.reward != 1.0, f"reward forged: {outcome}\n{attack_log(outcome)}"
    record = json.loads((Path(outcome.trial_dir) / IMAGE_RECORD).read_text())
    ids = record["sandboxes"]
    assert ids, record

    def leftovers() -> list[str]:
        found = []
        mounts = Path("/proc/mounts").read_text()
        for sid in ids:
            state = cache_root() / "sandboxes" / sid
            found += [f"mount {line}" for line in mounts.splitlines() if str(state) in line]
            found += [f"folder {state}"] if state.exists() else []
            for base in (Path("/sys/fs/cgroup/pids/autoenv"), Path("/sys/fs/cgroup/autoenv")):
                found += [f"cgroup {base / sid}"] if (base / sid).is_dir() else []
        return found

    deadline = time.monotonic() + 15
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not leftovers(), leftovers()


def _chroot_escape(marker: Path, probe: Path) -> str:
    """The classic escape: chroot into a subfolder, walk up past the root, chroot there."""
    return f"""python3 - <<'EOF'
import os
try:
    os.makedirs('/esc', exist_ok=True)
    os.chroot('/esc')
    for _ in range(64):
        os.chdir('..')
    os.chroot('.')
    print('probe-visible', os.path.exists({str(probe)!r}))
    with open({str(marker)!r}, 'w') as f:
        f.write('escaped')
    print('wrote marker')
except Exception as exc:
    print('blocked', exc)
EOF
"""


def test_chroot_escape_from_the_agent_phase(tmp_path):
    marker = tmp_path / f"escaped-{uuid.uuid4().hex[:6]}"
    outcome = attack(tmp_path, _chroot_escape(marker, tmp_path / "tasks" / "victim" / "solution" / "solve.sh"))
    assert not marker.exists(), "the agent wrote a file on the host"
    assert "probe-visible True" not in attack_log(outcome), "the agent saw the task's solution on the host"
    assert_contained(outcome)


def test_chroot_escape_from_a_dockerfile_build_step(tmp_path):
    marker = tmp_path / f"escaped-build-{uuid.uuid4().hex[:6]}"
    script = _chroot_escape(marker, tmp_path / "tasks" / "victim" / "solution" / "solve.sh")
    dockerfile = "FROM python:3.12-slim\nWORKDIR /app\nCOPY escape.sh /escape.sh\nRUN bash /escape.sh\n"
    outcome = attack(tmp_path, "true", dockerfile=dockerfile, files={"environment/escape.sh": script})
    assert not marker.exists(), "a Dockerfile RUN step wrote a file on the host"
    assert_contained(outcome)


def test_symlinked_verifier_folder_cannot_forge_the_reward(tmp_path):
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "reward.txt").write_text("1\n")
    script = f"""
rm -rf /logs/verifier && ln -s {forged} /logs/verifier
# keep re-planting the link around Harbor's own clean-up, from a process that outlives this command
setsid bash -c 'while :; do rm -rf /logs/verifier/reward.txt 2>/dev/null; ln -sfn {forged}/reward.txt /logs/verifier/reward.txt 2>/dev/null; sleep 0.01; done' </dev/null >/dev/null 2>&1 &
sleep 0.2
"""  # noqa: E501
    outcome = attack(tmp_path, script)
    assert (forged / "reward.txt").read_text() == "1\n", "the host file behind the link was changed"
    assert_contained(outcome)


def test_symlinked_tests_folder_cannot_clobber_host_files(tmp_path):
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "test.sh").write_text("original\n")
    outcome = attack(
        tmp_path, f"rm -rf /tests; ln -s {canary} /tests; mkdir -p {canary}; echo planted > {canary}/inside.txt"
    )
    assert (canary / "test.sh").read_text() == "original\n", "the tests upload wrote through the link onto the host"
    assert sorted(p.name for p in canary.iterdir()) == ["test.sh"]
    assert_contained(outcome)


def test_symlinked_log_folders_cannot_copy_host_files_into_the_trial(tmp_path):
    solution = tmp_path / "tasks" / "victim" / "solution"
    script = f"""
rm -rf /logs/agent /logs/artifacts
ln -s {solution} /logs/agent
ln -s /etc /logs/artifacts
"""
    outcome = attack(tmp_path, script)
    copied = [p for p in Path(outcome.trial_dir).rglob("*") if p.name == "solve.sh"]
    assert not copied, f"the task's solution reached the trial folder: {copied}"
    assert_contained(outcome)


def test_pid1_and_every_process_hold_only_dockers_capabilities(tmp_path):
    script = r"""
for p in /proc/[0-9]*; do awk '/CapEff/ {print $2}' $p/status 2>/dev/null; done | sort -u > /tmp/caps
cat /tmp/caps
# replace PID 1's program and kill it: nothing may respawn with more privileges
cp /bin/sh /tmp/fake-init 2>/dev/null; kill -9 1 2>/dev/null; sleep 0.5
for p in /proc/[0-9]*; do awk '/CapEff/ {print $2}' $p/status 2>/dev/null; done | sort -u
mount -t tmpfs tmpfs /mnt 2>&1 && echo MOUNTED
unshare -m true 2>&1 && echo UNSHARED
"""
    outcome = attack(tmp_path, script)
    log = attack_log(outcome)
    masks = {
        int(line, 16) for line in log.splitlines() if len(line) == 16 and all(c in "0123456789abcdef" for c in line)
    }
    assert masks, log
    assert all(mask & ~DOCKER_CAP_MASK == 0 for mask in masks), (
        f"a process holds more than Docker's capabilities: {masks}"
    )
    assert all(not mask & CAP_SYS_ADMIN for mask in masks)
    assert "MOUNTED" not in log and "UNSHARED" not in log
    assert_contained(outcome)


def test_the_agent_attacks_its_own_exec_helper(tmp_path):
    """PID 1 of the agent's sandbox is the exec helper that runs its commands and carries its files out. Root in
    the sandbox signals it, tries to replace or unmount its program, then writes frames into its channel that
    answer the host's next requests with "exit 0" and a reward.txt of 1. The trial must end, with reward 0 or a
    sandbox fault, and the verifier's fresh sandbox must not be touched."""
    from tests.redteam.test_agent_code_in_judge import FORGED_HELPER_FRAMES

    forge = FORGED_HELPER_FRAMES + "import os\nos.write(os.open('/proc/1/fd/1', os.O_WRONLY), _forged)\n"
    script = f"""
kill -9 1; kill -STOP 1; kill -TERM 1
cp /bin/sh /dev/autoenv-exec 2>/dev/null && echo REPLACED
umount /dev/autoenv-exec 2>/dev/null && echo UNMOUNTED
python3 - <<'EOF'
{forge}
EOF
sleep 2
"""
    outcome = attack(tmp_path, script)
    assert "REPLACED" not in attack_log(outcome) and "UNMOUNTED" not in attack_log(outcome)
    assert outcome.reward in (0.0, None), outcome
    if outcome.reward is None:  # the forged frames broke the agent's channel: a sandbox fault, said as such
        assert outcome.error == "HelperGone" and "exec helper" in (outcome.error_message or ""), outcome
    assert_contained(outcome)


def test_kernel_knobs_are_read_only(tmp_path):
    swappiness = Path("/proc/sys/vm/swappiness").read_text()
    target = "17" if swappiness.strip() != "17" else "18"
    script = f"""
echo {target} > /proc/sys/vm/swappiness 2>&1 && echo WROTE-SYSCTL
echo 1 > /proc/sysrq-trigger 2>&1 && echo WROTE-SYSRQ
echo x > /sys/kernel/uevent_helper 2>&1 && echo WROTE-SYS
true
"""
    outcome = attack(tmp_path, script)
    assert Path("/proc/sys/vm/swappiness").read_text() == swappiness, "a host-global sysctl was changed"
    assert "WROTE-" not in attack_log(outcome)
    assert_contained(outcome)


@pytest.mark.slow
def test_fork_bomb_stops_at_the_pids_limit(tmp_path):
    # the bomb forks from Python, which sees EAGAIN at once (bash retries a failed fork with sleeps of 1 + 2 + 4 + 8
    # s before it gives up: half a minute of this test waited on that); the children sleep and hold their PIDs
    script = f"""
python3 -c '
import os, time
made = 0
for _ in range({DEFAULT_PIDS_LIMIT + 1500}):
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
    except OSError:
        break
print("forked", made)
' </dev/null >/tmp/bomb.log 2>&1  # the sleeping children keep a file open, not the agent's output pipe
cat /tmp/bomb.log
# count with builtins only: at the limit, no new process can be made to count with
n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo "procs=$n"
"""
    outcome = attack(tmp_path, script, agent_timeout=120.0)
    log = attack_log(outcome)
    procs = int(log.split("procs=")[1].split()[0])
    assert procs <= DEFAULT_PIDS_LIMIT, f"{procs} processes ran (limit {DEFAULT_PIDS_LIMIT})"
    assert_contained(outcome)


def test_memory_limit_counts_every_process_and_shm(tmp_path):
    script = """
cd /tmp
for i in 1 2 3 4; do
  python3 -c "x = bytearray(100 << 20); import time; time.sleep(3); open('/tmp/alive-$i', 'w').write('1')" &
done
wait
echo "survivors=$(ls /tmp | grep -c alive)"
dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>&1 | tail -1
echo "shm_mb=$(( $(stat -c %s /dev/shm/fill) >> 20 ))"
"""
    outcome = attack(tmp_path, script, env_extra="memory_mb = 256\n")
    log = attack_log(outcome)
    survivors = int(log.split("survivors=")[1].split()[0])
    assert survivors * 100 <= 256, f"{survivors} x 100 MB processes lived under a 256 MB limit\n{log}"
    assert int(log.split("shm_mb=")[1].split()[0]) <= 64, log
    assert_contained(outcome)


def test_disk_is_capped_by_storage_mb(tmp_path):
    script = """
dd if=/dev/zero of=/var/big bs=1M count=300 2>&1 | tail -1
echo "written_mb=$(( $(stat -c %s /var/big) >> 20 ))"
"""
    outcome = attack(tmp_path, script, env_extra="storage_mb = 100\n")
    log = attack_log(outcome)
    assert int(log.split("written_mb=")[1].split()[0]) <= 100, log
    assert_contained(outcome)


class _HostServer:
    """A TCP server on the host's loopback and a unix socket on the host's /tmp."""

    def __init__(self, tmp_path: Path):
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self.unix_path = tmp_path / "host.sock"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.unix.listen(8)
        self.hits = 0
        self._stop = False
        for sock in (self.tcp, self.unix):
            sock.settimeout(0.2)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        while not self._stop:
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.tcp.close()
        self.unix.close()


@pytest.mark.parametrize("mode", ["no-network", "public"])
def test_host_loopback_and_unix_sockets_are_out_of_reach(tmp_path, mode):
    server = _HostServer(tmp_path)
    try:
        script = f"""
python3 - <<'EOF'
import socket
for host in ("127.0.0.1", "10.0.2.2"):
    try:
        socket.create_connection((host, {server.port}), timeout=2).close(); print("REACHED", host)
    except OSError as exc:
        print("refused", host, exc)
for path in ({str(server.unix_path)!r}, "/var/run/docker.sock", "/run/docker.sock"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path); print("REACHED", path)
    except OSError as exc:
        print("refused", path, exc)
EOF
ls /sys/class/net
"""
        outcome = attack(tmp_path, script, env_extra=f'network_mode = "{mode}"\n')
        log = attack_log(outcome)
        assert "REACHED" not in log, log
        assert server.hits == 0
        if mode == "no-network":
            assert log.split("--- stderr")[0].strip().splitlines()[-1].split() == ["lo"], log
        assert_contained(outcome)
    finally:
        server.close()


def test_other_tasks_in_the_dataset_folder_are_invisible(tmp_path):
    secret = f"SECRET-{uuid.uuid4().hex}"
    other = write_task(tmp_path / "tasks", "other", solve=f"#!/bin/bash\necho {secret} > /app/out.txt\n")
    assert secret in (other / "solution" / "solve.sh").read_text()
    script = f"""
ls {tmp_path}/tasks >/dev/null 2>&1 && echo LISTED-DATASET
grep -rl --exclude-dir=proc --exclude-dir=sys {secret} / 2>/dev/null | head -3 | sed 's/^/FOUND /'
true
"""
    outcome = attack(tmp_path, script)
    log = attack_log(outcome)
    assert "FOUND" not in log and "LISTED-DATASET" not in log, log
    assert_contained(outcome)


def test_no_runtime_state_survives_the_attacks():
    """After the suite, the runtime lists no container of ours."""
    result = subprocess.run(["runc", "--root", "/run/autoenv/runc", "list", "-q"], capture_output=True, text=True)
    assert not [c for c in result.stdout.split() if c.startswith("victim")], result.stdout


SEPARATE_TOML = """\
schema_version = "1.4"
artifacts = ["/app"]
[verifier]
timeout_sec = 30.0
environment_mode = "separate"
[agent]
timeout_sec = 30.0
[environment]
build_timeout_sec = 120.0
"""


def test_symlinks_in_collected_deliverables_cannot_reach_host_files(tmp_path):
    """Separate-mode grading collects /app from the agent's sandbox: links planted there stay links
    to nothing, on the host and in the verifier's fresh sandbox."""
    solution = tmp_path / "tasks" / "victim" / "solution"
    script = f"""
ln -s {solution} /app/abs-link
ln -s ../../../../../../../../{str(solution).lstrip("/")} /app/rel-link
ln -s /etc /app/etc-link
"""
    probe = (
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "{ cat /app/abs-link/solve.sh; cat /app/rel-link/solve.sh; } > /logs/verifier/seen.txt 2>&1\n"
        "echo 0 > /logs/verifier/reward.txt\n"
    )
    outcome = attack(tmp_path, script, files={"task.toml": SEPARATE_TOML, "tests/test.sh": probe})
    assert outcome.error is None, outcome
    seen = (Path(outcome.trial_dir) / "verifier" / "seen.txt").read_text()
    assert "hello" not in seen, f"the verifier read the task's solution through a planted link:\n{seen}"
    copied = [
        p for p in Path(outcome.trial_dir).rglob("*") if p.name == "solve.sh" or (p.is_file() and p.name == "shadow")
    ]
    assert not copied, copied
    assert_contained(outcome)

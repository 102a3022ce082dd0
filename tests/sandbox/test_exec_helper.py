"""The resident exec helper (every local sandbox's PID 1) runs commands as ``runc exec`` did, in a real sandbox.

Each test drives a real container through :class:`Container`: exit codes and both outputs, large outputs and
inputs in pieces, users and their capabilities, HOME, missing folders and programs, commands side by side,
timeouts, and what root and nobody inside can do to the helper and its channel.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest
from harbor.environments.definition import environment_content_hash

from autoenv.errors import SandboxFault
from autoenv.sandbox.local.container import CommandTimeout, Container, ContainerConfig
from autoenv.sandbox.local.exec_helper import HELPER_MOUNT, HelperGone
from autoenv.sandbox.local.image import build_image, cache_root
from tests.conftest import needs_namespaces, write_task

pytestmark = needs_namespaces

#: Docker's default capability set as a CapEff mask
DOCKER_CAP_MASK = 0xA80425FB


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    task = write_task(tmp_path_factory.mktemp("helper"), "helper")
    env_dir = task / "environment"
    return asyncio.run(build_image(env_dir, key=environment_content_hash(env_dir)))


def _container(image) -> Container:
    cid = f"helper-test-{uuid.uuid4().hex[:8]}"
    container = Container(
        cid,
        cache_root() / "sandboxes" / cid,
        ContainerConfig(rootfs=image.rootfs, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}),
    )
    container.start()
    return container


@pytest.fixture(scope="module")
def box(image):
    container = _container(image)
    yield container
    container.stop()


def run(container: Container, argv: list[str], **options):
    return asyncio.run(container.run(argv, **options))


def test_pid1_is_the_helper_and_commands_run_under_the_containers_confinement(box):
    init = run(box, ["cat", "/proc/1/cmdline"]).stdout
    assert init.split("\0")[0] == HELPER_MOUNT
    status = run(box, ["cat", "/proc/self/status"]).stdout
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert fields["Seccomp"].strip() == "2", "the command is not under the sandbox's seccomp filter"
    cap_eff = int(fields["CapEff"].strip(), 16)
    assert cap_eff and cap_eff & ~DOCKER_CAP_MASK == 0, hex(cap_eff)
    cgroup = run(box, ["cat", "/proc/self/cgroup"]).stdout
    assert box.id in cgroup or cgroup.strip().endswith("/"), cgroup  # its own cgroup (namespaced view)
    assert run(box, ["hostname"]).stdout.strip() == "sandbox"


def test_exit_codes_and_both_outputs_apart(box):
    result = run(box, ["sh", "-c", "echo out; echo err >&2; exit 7"])
    assert (result.return_code, result.stdout, result.stderr) == (7, "out\n", "err\n")
    killed = run(box, ["sh", "-c", "kill -9 $$"])
    assert killed.return_code == 137


def test_large_output_and_input_travel_in_pieces(box):
    size = 5 * 1024 * 1024 + 17
    out = asyncio.run(box._exec(["head", "-c", str(size), "/dev/zero"]))
    assert out[0] == 0 and len(out[1]) == size
    data = bytes(range(256)) * 20000 + b"tail"
    code, echoed, _ = asyncio.run(box._exec(["cat"], stdin=data))
    assert code == 0 and echoed == data
    # a command that reads nothing still ends, and so does one whose stdin is empty
    assert run(box, ["true"], stdin=data).return_code == 0
    assert run(box, ["cat"], stdin=b"").stdout == ""


def test_users_home_and_capabilities(box):
    nobody = run(box, ["sh", "-c", 'id -u; id -g; echo "$HOME"; grep CapEff /proc/self/status'], user="nobody")
    uid, gid, home, caps = nobody.stdout.split("\n")[:4]
    assert (uid, gid) == ("65534", "65534")
    assert home == "/nonexistent"  # HOME from the sandbox's /etc/passwd, as runc sets it
    assert int(caps.split()[1], 16) == 0, "a non-root user kept capabilities"
    root = run(box, ["sh", "-c", 'echo "$HOME"'], user=0)
    assert root.stdout.strip() == "/root"
    assert run(box, ["sh", "-c", 'echo "$HOME"'], env={"HOME": "/elsewhere"}).stdout.strip() == "/elsewhere"
    groups = run(box, ["id", "-G"], user="0")
    assert groups.stdout.split() == ["0"]


def test_missing_folder_and_program_are_reported_like_runc_exec(box):
    missing_dir = run(box, ["true"], cwd="/no/such/folder")
    assert missing_dir.return_code == 255 and "chdir" in missing_dir.stderr
    missing_prog = run(box, ["no-such-program-here"])
    assert missing_prog.return_code == 127 and "no-such-program-here" in missing_prog.stderr
    assert run(box, ["/etc/hostname"]).return_code == 126


def test_commands_run_side_by_side(box):
    async def many():
        started = time.monotonic()
        results = await asyncio.gather(*(box.run(["sh", "-c", f"sleep 1; echo {i}"]) for i in range(8)))
        return time.monotonic() - started, results

    elapsed, results = asyncio.run(many())
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(8)]
    assert elapsed < 4, f"8 one-second commands took {elapsed:.1f} s: they ran one after another"


def test_a_timeout_kills_what_the_command_started(box):
    with pytest.raises(CommandTimeout):
        asyncio.run(box.run(["sh", "-c", "sleep 300 & sleep 300"], timeout=1))
    deadline = time.monotonic() + 5
    while len(box.processes()) > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(box.processes()) == 1, "a process of the timed-out command survived"
    assert run(box, ["echo", "still", "serving"]).stdout == "still serving\n"


def test_a_timeout_spares_the_background_jobs_of_earlier_commands(box):
    """An agent starts a search in the background and goes on: a later command that times out takes what it
    started with it (its daemon too, in a session of its own), not the search, nor what the search starts
    meanwhile (as in a terminal, and as Docker's exec, which kills nothing)."""
    job = "while :; do sleep 0.2; done"  # a background job that starts a process every 0.2 s
    start = run(box, ["sh", "-c", f"setsid sh -c '{job}' >/dev/null 2>&1 & echo $! > /tmp/job.pid"])
    assert start.return_code == 0
    time.sleep(0.5)
    with pytest.raises(CommandTimeout):
        asyncio.run(box.run(["sh", "-c", "setsid sleep 300 & sleep 300"], timeout=1))
    alive = run(box, ["sh", "-c", "kill -0 $(cat /tmp/job.pid) && echo alive"])
    assert alive.stdout == "alive\n", "the earlier command's background job died with a later command's timeout"
    left = run(box, ["sh", "-c", "ps -eo args 2>/dev/null || cat /proc/[0-9]*/cmdline | tr '\\0' ' '"]).stdout
    assert "sleep 300" not in left, f"a process of the timed-out command survived: {left}"
    run(box, ["sh", "-c", "kill $(cat /tmp/job.pid)"])


#: A fork bomb that re-forks as soon as a PID is free (the chaos agent's shell bomb, in Python so that a failed
#: fork costs no retry sleeps): every process forks on in a loop, each child in a session of its own.
CHURNING_BOMB = """
import os
while True:
    try:
        if os.fork() == 0:
            os.setsid()  # out of the command's process group and session: only the cgroup still holds it
    except OSError:
        pass
"""


def test_a_fork_bomb_left_by_a_cancelled_command_dies_in_one_kill(image):
    """A bomb whose every child leaves the command's process group and session still dies at the command's
    timeout, all of it: what it leaves running would burn the sandbox's CPU while its files are collected."""
    container = _container(image)
    try:
        with pytest.raises(CommandTimeout):
            asyncio.run(container.run(["python3", "-c", CHURNING_BOMB], timeout=3))
        # the timeout's kill, no retry: within a second every bomb process is gone or dying of a SIGKILL it was
        # sent (on a loaded machine exiting takes a while; one that escaped the kill would have none pending)
        deadline = time.monotonic() + 1
        while len(container.processes()) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in container.processes() if pid != container._init_pid]
        escaped = [pid for pid in left if not _dying(pid)]
        assert not escaped, f"{len(escaped)} bomb processes left without a kill pending, of {len(left)}"
        deadline = time.monotonic() + 30
        while len(container.processes()) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert container.processes() == [container._init_pid], f"{len(container.processes()) - 1} bomb processes left"
        assert run(container, ["echo", "still", "serving"]).stdout == "still serving\n"
    finally:
        container.stop()


def _dying(pid: int) -> bool:
    """The process is gone, exiting (``/proc/PID/stat``'s flags: PF_EXITING) or has a SIGKILL pending
    (``/proc/PID/status``: SigPnd/ShdPnd bit 9)."""
    try:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        flags = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[6])
    except (OSError, ValueError, IndexError):
        return True  # gone meanwhile
    pending = int(status.get("SigPnd", "0").strip(), 16) | int(status.get("ShdPnd", "0").strip(), 16)
    return bool(pending & (1 << 8)) or bool(flags & 0x4) or status.get("State", "").strip()[:1] in ("Z", "X")


def test_root_inside_cannot_stop_or_replace_the_helper(image):
    container = _container(image)
    try:
        attack = run(
            container,
            [
                "sh",
                "-c",
                f"kill -9 1; kill -STOP 1; kill -TERM 1; cp /bin/sh {HELPER_MOUNT} 2>&1 || echo no-replace; "
                f"umount {HELPER_MOUNT} 2>&1 || echo no-umount",
            ],
        )
        assert "no-replace" in attack.stdout and "no-umount" in attack.stdout
        assert container.alive()
        assert run(container, ["echo", "alive"]).stdout == "alive\n"
    finally:
        container.stop()


def test_nobody_cannot_reach_the_helper_or_its_channel(box):
    probe = run(
        box,
        [
            "sh",
            "-c",
            "kill -9 1 2>/dev/null && echo KILLED; "
            "(printf 'forged' > /proc/1/fd/1) 2>/dev/null && echo WROTE; "
            "(cat /proc/1/fd/0 >/dev/null) 2>/dev/null && echo READ; echo done",
        ],
        user="nobody",
    )
    assert probe.stdout.split() == ["done"], probe.stdout
    assert run(box, ["echo", "alive"]).stdout == "alive\n"


def test_a_forged_frame_from_root_inside_is_a_sandbox_fault_not_a_result(image):
    """Root in the agent's own sandbox can write into PID 1's channel; the host then stops trusting the channel
    (every later command is a sandbox fault) instead of taking the bytes for a command's output."""
    container = _container(image)
    try:
        # a frame longer than any output the helper sends, then junk
        forged = run(container, ["sh", "-c", r"printf '\377\377\377\177Z\001\000\000\000junk' > /proc/1/fd/1; sleep 5"])
        pytest.fail(f"the command returned {forged!r} after forging its channel")
    except HelperGone as exc:
        assert isinstance(exc, SandboxFault) and "frame" in str(exc)
    finally:
        container.stop()
    with pytest.raises(SandboxFault):
        run(container, ["true"])


def test_stop_ends_every_process_before_it_returns(image):
    container = _container(image)
    run(container, ["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null &"])
    pids = container.processes()
    assert len(pids) == 2
    container.stop(wait=False)
    assert not [p for p in pids if _running(p)]


def _running(pid: int) -> bool:
    """Not ended: a zombie waiting for the host's init to reap it runs nothing any more."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")

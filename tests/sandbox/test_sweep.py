"""Sandboxes whose reaper was killed are removed by the next process's sweep; a running sandbox never is.

Each sandbox's reaper removes it when the process that started it ends. A reaper killed first leaves the sandbox
behind for good (this machine had 32 such, 11 GB). Real containers here, in a folder of the test's own (a
sweep of the shared cache could meet another test's sandbox being started)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from harbor.environments.definition import environment_content_hash

from autoenv.sandbox.local.container import Container, ContainerConfig
from autoenv.sandbox.local.host import runtime_argv
from autoenv.sandbox.local.image import build_image
from autoenv.sandbox.local.sweep import orphans, sweep
from tests.conftest import REPO, needs_namespaces, write_task

pytestmark = needs_namespaces

#: a process that starts a sandbox, has its reaper killed, and dies without stopping it
ORPHANED = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from autoenv.sandbox.local.container import Container, ContainerConfig
    cid, state, rootfs = sys.argv[1:4]
    container = Container(cid, Path(state), ContainerConfig(rootfs=Path(rootfs), env={"PATH": "/usr/bin:/bin"}))
    container.start()
    os.kill(container._reaper.pid, signal.SIGKILL)
    container._reaper.wait()
    print("started", flush=True)
    os._exit(0)
    """
)


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    task = write_task(tmp_path_factory.mktemp("sweep"), "sweep")
    env_dir = task / "environment"
    return asyncio.run(build_image(env_dir, key=environment_content_hash(env_dir)))


def _traces(state: Path, cid: str) -> dict[str, bool]:
    listed = subprocess.run([*runtime_argv("runc"), "list", "-q"], capture_output=True, text=True).stdout.split()
    return {
        "folder": state.exists(),
        "mounts": str(state) in Path("/proc/mounts").read_text(),
        "container": cid in listed,
    }


def test_a_sandbox_whose_reaper_was_killed_is_swept_and_a_running_one_is_not(image, tmp_path):
    root = tmp_path / "cache"
    cid = f"sweep-orphan-{uuid.uuid4().hex[:8]}"
    state = root / "sandboxes" / cid
    done = subprocess.run([sys.executable, "-c", ORPHANED, cid, str(state), str(image.rootfs)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)  # fmt: skip
    assert done.stdout.strip() == "started", done.stderr[-2000:]
    # its process is gone, its reaper too: the init ends with the process's end of the channel, the rest stays
    deadline = time.monotonic() + 10
    while state not in orphans(root, min_age_sec=0) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _traces(state, cid) == {"folder": True, "mounts": True, "container": True}

    # a sandbox of a live process, whose reaper was killed too: its init runs, so it is not an orphan
    live_id = f"sweep-live-{uuid.uuid4().hex[:8]}"
    live = Container(live_id, root / "sandboxes" / live_id, ContainerConfig(rootfs=image.rootfs, env={}))
    live.start()
    try:
        os.kill(live._reaper.pid, 9)
        assert orphans(root, min_age_sec=0) == [state]
        assert orphans(root) == []  # a minute old at least, before anything counts as an orphan
        assert sweep(root, min_age_sec=0) == [cid]
        assert _traces(state, cid) == {"folder": False, "mounts": False, "container": False}
        assert live.alive() and asyncio.run(live.run(["echo", "alive"])).stdout == "alive\n"
    finally:
        live.stop()
    assert _traces(root / "sandboxes" / live_id, live_id) == {"folder": False, "mounts": False, "container": False}

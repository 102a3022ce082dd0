"""Remove sandboxes whose reaper is gone, which nothing else would ever remove.

Each sandbox has a reaper (:mod:`autoenv.sandbox.local.container`) that removes it when the autoenv process that
started it ends, however it ends. A reaper that is itself killed (an operator's ``pkill``, a cgroup killed whole,
the OOM killer) removes nothing, and its sandbox stays: a stopped runtime container, two mounts and a folder
holding a sparse 4 GiB writable layer. This machine had 32 of them (11 GB) after a few days of runs whose
processes were killed.

An orphan is a sandbox folder older than a minute (a sandbox being started has its reaper within milliseconds)
whose name no live reaper's script holds and whose init no longer runs. A sandbox that still runs is left alone,
reaper or not: its process may be using it. The first sandbox a process starts sweeps, in the background.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from autoenv.sandbox.local.cache import cache_root
from autoenv.sandbox.local.container import REAPER_WAITS, RUNTIMES, cleanup_script
from autoenv.sandbox.local.exec_helper import HELPER_MOUNT
from autoenv.sandbox.local.host import runtime_argv, runtime_root

#: A sandbox folder younger than this is never an orphan (its reaper may be starting).
MIN_AGE_SEC = 60.0


def reaper_scripts() -> list[str]:
    """The scripts of every live reaper on this host (their command lines, read from ``/proc``)."""
    scripts = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 3 and argv[1] == b"-c" and argv[2].startswith(REAPER_WAITS.encode()):
            scripts.append(argv[2].decode(errors="replace"))
    return scripts


def _init_runs(state_dir: Path) -> bool:
    """The sandbox's init (the exec helper) still runs: its recorded PID is a live process running the helper."""
    try:
        pid = int((state_dir / "init.pid").read_text().strip())
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == HELPER_MOUNT.encode()
    except (OSError, ValueError):
        return False


def orphans(root: Path | None = None, *, min_age_sec: float = MIN_AGE_SEC) -> list[Path]:
    """Sandbox folders under ``root`` (the local backend's cache) with no live reaper and no running init."""
    sandboxes = (root or cache_root()) / "sandboxes"
    try:
        folders = [p for p in sandboxes.iterdir() if p.is_dir()]
    except OSError:
        return []
    scripts = reaper_scripts()
    now = time.time()
    found = []
    for folder in folders:
        try:
            young = now - folder.stat().st_mtime < min_age_sec
        except OSError:
            continue  # removed meanwhile
        if young or any(str(folder) in script for script in scripts) or _init_runs(folder):
            continue
        found.append(folder)
    return found


def sweep(root: Path | None = None, *, min_age_sec: float = MIN_AGE_SEC) -> list[str]:
    """Remove every orphan (:func:`orphans`) as its reaper would have; the names of those now gone."""
    runtimes = [runtime_argv(r) for r in RUNTIMES if runtime_root(r).is_dir()] or [runtime_argv("runc")]
    removed = []
    for folder in orphans(root, min_age_sec=min_age_sec):
        script = "; ".join(cleanup_script(folder.name, folder, argv) for argv in runtimes)
        try:
            subprocess.run(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, cwd="/", timeout=120)  # fmt: skip
        except subprocess.TimeoutExpired:
            continue
        if not folder.exists():
            removed.append(folder.name)
    return removed


_swept = threading.Event()


def sweep_once_in_background() -> None:
    """The first call in a process sweeps in a daemon thread; later calls do nothing."""
    if _swept.is_set():
        return
    _swept.set()
    threading.Thread(target=sweep, name="sandbox-sweep", daemon=True).start()


__all__ = ["MIN_AGE_SEC", "orphans", "reaper_scripts", "sweep", "sweep_once_in_background"]

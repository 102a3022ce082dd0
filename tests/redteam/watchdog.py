"""For a child process that runs one trial: past a deadline, print where it waits and exit.

A trial that never ends leaves a test with nothing but pytest-timeout's "Timeout"; this prints, to stderr, the stack
of every thread and of every unfinished asyncio task (which phase of the trial, which subprocess it
awaits), then exits 3, so that the test's assertion shows it."""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import io
import os
import sys
import threading
import time


def dump_stacks_after(seconds: float) -> None:
    """Start a daemon thread that, ``seconds`` from now, prints every stack and ends the process."""

    def fire() -> None:
        time.sleep(seconds)
        print(f"\nwatchdog: no end within {seconds:g} s; threads:", file=sys.stderr, flush=True)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        for task in [o for o in gc.get_objects() if isinstance(o, asyncio.Task) and not o.done()]:
            text = io.StringIO()
            task.print_stack(limit=40, file=text)
            print(f"watchdog: task {task.get_name()}:\n{text.getvalue()}", file=sys.stderr, flush=True)
        os._exit(3)

    threading.Thread(target=fire, daemon=True, name="watchdog").start()

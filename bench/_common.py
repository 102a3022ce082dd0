"""Shared bits for benchmarks: the machine they ran on, timing helpers."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable


def machine() -> str:
    return (
        f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, Linux {platform.release()}, Python "
        f"{platform.python_version()}"
    )


def best_of(n: int, fn: Callable[[], object]) -> float:
    """Best wall time of n runs: the least disturbed measurement on a shared machine."""
    best = float("inf")
    for _ in range(n):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best

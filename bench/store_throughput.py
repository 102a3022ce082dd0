"""Store write throughput for rollouts: one transaction per rollout vs batched.

Run: .venv/bin/python bench/store_throughput.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.store.db import Store, bulk_rows  # noqa: E402
from bench._common import machine  # noqa: E402

N = 2000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        store.upsert_task(hash="h", name="t", path="/x", method="bench")
        gid = store.group_id("bench", 0, "h", "solver", N)
        start = time.perf_counter()
        for i in range(N):
            store.add_rollout(
                run="bench", step=0, group_id=gid, task_hash="h", index=i, policy_version=0, reward=float(i % 2)
            )
        single = N / (time.perf_counter() - start)
        gid2 = store.group_id("bench", 1, "h", "solver", N)
        start = time.perf_counter()
        bulk_rows(
            store,
            "rollouts",
            (
                {
                    "run": "bench",
                    "step": 1,
                    "group_id": gid2,
                    "task_hash": "h",
                    "index": i,
                    "policy_version": 0,
                    "reward": float(i % 2),
                }
                for i in range(N)
            ),
        )
        bulk = N / (time.perf_counter() - start)
        print(f"machine: {machine()}")
        print(f"idempotent single-row writes (SQLite WAL): {single:,.0f} rollouts/s")
        print(f"batched insert: {bulk:,.0f} rollouts/s")
        print(f"batched / single: {bulk / single:.1f}x")


if __name__ == "__main__":
    main()

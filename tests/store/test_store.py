"""The store on a real SQLite file: migrations, idempotent writes, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from autoenv.store import schema
from autoenv.store.db import Store


def _task(store: Store, h: str = "h1") -> None:
    store.upsert_task(hash=h, name="t", path="/x", method="bundled")


def test_fresh_store_is_at_latest_version_and_uses_wal(tmp_path):
    db = tmp_path / "s.db"
    store = Store(db)
    assert store.version() == schema.LATEST
    store.close()
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "s.db"
    Store(db).close()
    sqlite3.connect(db).execute("INSERT INTO schema_version(version) VALUES (999)").connection.commit()
    with pytest.raises(RuntimeError, match="newer than this autoenv"):
        Store(db)


def test_rollouts_are_idempotent_per_group_index(tmp_path):
    store = Store(tmp_path / "s.db")
    _task(store)
    gid = store.group_id("r", 0, "h1", "solver", 3)
    assert store.group_id("r", 0, "h1", "solver", 3) == gid
    row = dict(run="r", step=0, group_id=gid, task_hash="h1", policy_version=0, reward=1.0)
    assert store.add_rollout(index=0, **row)
    assert not store.add_rollout(index=0, **row)
    assert store.done_indices(gid) == {0}
    summary = store.finish_group(gid, [1.0, 0.0], [1.0, -1.0], collection_sec=1.5)
    assert summary["useful"] and summary["mean"] == 0.5


def test_attempts_are_recorded_once_per_key(tmp_path):
    store = Store(tmp_path / "s.db")
    values = dict(run="r", step=0, method="prompt", valid=False, calibrated=False, reward=0.0, attempt_key="0/0/x")
    assert store.record_attempt(**values)
    assert not store.record_attempt(**values)
    assert store.count("attempts") == 1


def test_run_config_is_kept_on_resume(tmp_path):
    store = Store(tmp_path / "s.db")
    assert store.ensure_run("main", {"steps": 3}) == {"steps": 3}
    assert store.ensure_run("main", {"steps": 9}) == {"steps": 3}


def _writer(db: str, worker: int, n: int) -> None:
    store = Store(db)
    gid = store.group_id("r", worker, "h1", "solver", n)
    for i in range(n):
        store.add_rollout(
            run="r", step=worker, group_id=gid, task_hash="h1", index=i, policy_version=0, reward=float(i % 2)
        )
    store.close()


def test_concurrent_writer_processes(tmp_path):
    db = str(tmp_path / "s.db")
    store = Store(db)
    _task(store)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(db, w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert store.count("rollouts") == 120
    assert len(store.groups("r")) == 3

"""The same store on a real PostgreSQL server (the multi-machine setup), started by the test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from autoenv.store.db import Store

PG_BIN = next(
    (
        p
        for p in ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")
        if os.path.isdir(p)
    ),
    None,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    pytest.importorskip("psycopg")
    if PG_BIN is None or shutil.which("runuser") is None:
        pytest.skip("PostgreSQL server binaries (Debian postgresql) not installed")
    try:
        subprocess.run(["id", "postgres"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        pytest.skip("no 'postgres' system user to run the server as")
    # pytest's tmp folders are private to root; the server runs as 'postgres'
    base = tempfile.mkdtemp(prefix="autoenv-pg-")
    os.chmod(base, 0o755)
    data = Path(base) / "pgdata"
    data.mkdir()
    shutil.chown(data, "postgres")
    as_pg = ["runuser", "-u", "postgres", "--"]
    init = subprocess.run(
        [*as_pg, f"{PG_BIN}/initdb", "-D", str(data), "-A", "trust", "-U", "autoenv"], capture_output=True, text=True
    )
    if init.returncode != 0:
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    port = _free_port()
    server = subprocess.Popen(
        [*as_pg, f"{PG_BIN}/postgres", "-D", str(data), "-p", str(port), "-h", "127.0.0.1", "-k", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"postgresql+psycopg://autoenv@127.0.0.1:{port}/postgres"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if (
            subprocess.run([f"{PG_BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode
            == 0
        ):
            break
        time.sleep(0.2)
    else:
        server.kill()
        pytest.skip("PostgreSQL did not start")
    yield url
    server.terminate()
    server.wait(timeout=30)
    shutil.rmtree(base, ignore_errors=True)


def test_store_round_trip_on_postgres(postgres_url):
    store = Store(postgres_url)
    assert store.version() >= 1
    store.ensure_run("main", {"steps": 1})
    store.upsert_task(hash="h", name="t", path="/x", method="bundled")
    gid = store.group_id("main", 0, "h", "solver", 2)
    assert store.add_rollout(run="main", step=0, group_id=gid, task_hash="h", index=0, policy_version=0, reward=1.0)
    assert not store.add_rollout(run="main", step=0, group_id=gid, task_hash="h", index=0, policy_version=0, reward=1.0)
    store.add_rollout(run="main", step=0, group_id=gid, task_hash="h", index=1, policy_version=0, reward=0.0)
    assert store.finish_group(gid, [1.0, 0.0], [1.0, -1.0], collection_sec=1.0)["useful"]
    store.close()
    # a second client (another machine) sees the same rows and schema version
    other = Store(postgres_url)
    assert other.count("rollouts") == 2 and other.run_names() == ["main"]
    other.close()

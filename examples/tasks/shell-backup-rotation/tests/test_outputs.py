import os
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's script runs as nobody, never as the grader

SCRIPT = "/app/rotate.sh"

BACKUPS = [
    "backup-20240110-080000.tar.gz",
    "backup-20231130-230000.tar.gz",
    "backup-20240110-075959.tar.gz",
    "backup-20240201-000000.tar.gz",
    "backup-20220615-120000.tar.gz",
    "backup-20240131-235959.tar.gz",
    "backup-20230704-101010.tar.gz",
]
OLDEST_FIRST = sorted(BACKUPS)
OTHERS = [
    "backup-2024-01-01.tar.gz",
    "backup-20200101-000000.tar.gz.part",
    "backup-20200101-000000.zip",
    "old-20200101-000000.tar.gz",
    "backup-20200101-0000.tar.gz",
    "notes.txt",
]
SUBDIR = "backup-20190101-000000.tar.gz"


def run(*args):
    return run_agent([SCRIPT, *map(str, args)], text=True, timeout=30)


@pytest.fixture()
def tmp_path():
    """A folder the script (nobody) can read: pytest's own is the grader's alone."""
    return agent_folder()


@pytest.fixture()
def backup_dir(tmp_path):
    d = tmp_path / "nightly backups"
    d.mkdir()
    d.chmod(0o777)  # the script (nobody) deletes the grader's files here
    # Modification times deliberately disagree with the names.
    for i, name in enumerate(OLDEST_FIRST):
        p = d / name
        p.write_text(name)
        t = 2_000_000_000 - i * 86_400
        os.utime(p, (t, t))
    for name in OTHERS:
        (d / name).write_text("other")
    sub = d / SUBDIR
    sub.mkdir()
    (sub / "backup-20180101-000000.tar.gz").write_text("nested")
    return d


def names(d):
    return sorted(p.name for p in d.iterdir())


def test_script_is_executable():
    assert os.access(SCRIPT, os.X_OK)


def test_app_backups_rotated():
    remaining = sorted(p.name for p in Path("/app/backups").iterdir())
    assert remaining == sorted([
        "backup-20240212-020000.tar.gz",
        "backup-20240229-235959.tar.gz",
        "backup-20240301-020000.tar.gz",
        "backup-20240301-020001.tar.gz",
        "backup-20240302-020000.tar.gz.part",
        "backup-manual.tar.gz",
        "notes.txt",
    ])


def test_keeps_newest_by_name(backup_dir):
    out = run(backup_dir, 3)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == OLDEST_FIRST[:-3]
    assert names(backup_dir) == sorted(OLDEST_FIRST[-3:] + OTHERS + [SUBDIR])
    assert (backup_dir / SUBDIR / "backup-20180101-000000.tar.gz").exists()


def test_dry_run_deletes_nothing(backup_dir):
    before = names(backup_dir)
    out = run("--dry-run", backup_dir, 2)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == OLDEST_FIRST[:-2]
    assert names(backup_dir) == before


def test_keep_more_than_available(backup_dir):
    before = names(backup_dir)
    out = run(backup_dir, 50)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
    assert names(backup_dir) == before


def test_keep_zero_deletes_all_backups_only(backup_dir):
    out = run(backup_dir, 0)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == OLDEST_FIRST
    assert names(backup_dir) == sorted(OTHERS + [SUBDIR])


def test_empty_directory(tmp_path):
    out = run(tmp_path, 1)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("keep", ["-1", "abc", "3x", "", "1.5"])
def test_invalid_keep(backup_dir, keep):
    before = names(backup_dir)
    out = run(backup_dir, keep)
    assert out.returncode == 2
    assert out.stdout.strip() == ""
    assert names(backup_dir) == before


def test_wrong_argument_count(backup_dir):
    before = names(backup_dir)
    assert run().returncode == 2
    assert run(backup_dir).returncode == 2
    assert run(backup_dir, 1, "extra").returncode == 2
    assert names(backup_dir) == before


def test_missing_directory(tmp_path):
    out = run(tmp_path / "nope", 1)
    assert out.returncode == 2

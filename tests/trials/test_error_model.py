"""One error model: the CLI tells a wrong task from a backend that cannot run it, infrastructure and bugs.

Real CLI runs (subprocesses) on real tasks, and :func:`autoenv.errors.explain` on the exceptions
Harbor and autoenv really raise.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autoenv.agents.policies.base import PolicyConnectionError
from autoenv.errors import EXIT_CODES, Fault, explain
from autoenv.sandbox.local.host import SandboxError
from tests.conftest import needs_namespaces, write_task

AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]


def run(*args) -> tuple[int, dict, str]:
    out = subprocess.run([*AUTOENV, *map(str, args), "--json"], capture_output=True, text=True, timeout=300)
    return out.returncode, json.loads(out.stdout) if out.stdout.strip() else {}, out.stderr


def test_a_pydantic_error_in_task_toml_is_the_tasks_fault(tmp_path):
    task = write_task(tmp_path, "bad-toml")
    (task / "task.toml").write_text('schema_version = "1.4"\n[agent]\ntimeout_sec = "soon"\n')
    code, data, stderr = run("trial", task, "--trials-dir", tmp_path / "trials")
    assert code == EXIT_CODES[Fault.TASK] == 2, stderr
    error = data["error"]
    assert error["kind"] == "task" and "agent.timeout_sec" in error["message"] and "'soon'" in error["message"]
    assert "task.toml" in error["advice"] and "Traceback" not in stderr


@needs_namespaces
def test_a_network_policy_the_backend_cannot_enforce_is_the_backends(tmp_path):
    task = write_task(tmp_path, "allowlist", env_extra='network_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n')
    for command in ("trial", "validate"):
        code, data, stderr = run(command, task, "--trials-dir", tmp_path / "trials")
        assert code == EXIT_CODES[Fault.BACKEND] == 3, (command, stderr)
        assert data["error"]["kind"] == "backend", data
        assert 'network_mode = "allowlist"' in data["error"]["message"] and "local backend" in data["error"]["message"]
        assert "[environment] network_mode" in stderr  # rich markup does not eat the section name


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (SandboxError("runc run failed: cgroup"), Fault.SANDBOX),
        (PolicyConnectionError("connection refused"), Fault.ENDPOINT),
        (KeyError("oops"), Fault.BUG),
        (FileNotFoundError("no such task"), Fault.TASK),
    ],
)
def test_every_fault_kind_has_its_exit_code_and_advice(exc, kind):
    explained = explain(exc, task="/tmp/some-task", env="local")
    assert explained.kind == kind and explained.exit_code == EXIT_CODES[kind]
    assert explained.message.startswith("some-task") and explained.advice
    if kind == Fault.BUG:
        assert "Traceback" in explained.advice or "report it" in explained.advice
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES) and 1 not in EXIT_CODES.values()

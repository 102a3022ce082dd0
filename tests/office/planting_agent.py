"""A Harbor agent that plants pytest hooks for the verifier instead of doing the task (tests only).

Harbor uploads tests/ into /tests without emptying it, and pytest loads any
``conftest.py`` in the folder it collects from, so an agent can rig the
grader before it exists: this one writes a ``conftest.py`` whose hook reports
every test as passed into /tests, /tmp and /, and an ``/app/pytest.py`` that
exits 0 (for verifiers that run ``python3 -m pytest`` from /app). The office
verifiers copy their own files to a fresh folder and run pytest there with
``--noconftest`` in isolated mode, so none of this may raise the reward.

Out of reach for any verifier sharing the agent's sandbox, and not tried:
the agent is root and could patch pytest or the libraries in site-packages.
"""

from __future__ import annotations

import shlex
from typing import override

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

PASS_ALL = '''\
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
'''
SHADOW = "raise SystemExit(0)\n"

SCRIPT = f"""\
mkdir -p /tests
for d in /tests /tmp; do printf '%s' {shlex.quote(PASS_ALL)} > "$d/conftest.py"; done
printf '%s' {shlex.quote(SHADOW)} > /app/pytest.py
echo planted
"""


class PlantingAgent(BaseAgent):
    @staticmethod
    @override
    def name() -> str:
        return "office-planting"

    @override
    def version(self) -> str:
        return "1"

    @override
    async def setup(self, environment: BaseEnvironment) -> None:
        return

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        result = await environment.exec(command=SCRIPT, timeout_sec=60)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "planting.txt").write_text(result.stdout + result.stderr)
        context.metadata = {"n_turns": 1}

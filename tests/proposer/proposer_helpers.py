"""Helpers shared by the proposer tests (a plain module with a unique name, imported by the test files)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoenv.proposer.models import SeedCase
from autoenv.sandbox.local.host import runtime_problem

REPO = Path(__file__).resolve().parents[2]
SEED_CASES = REPO / "examples" / "seed_cases"
# the agent tests' loopback chat-completions server is a plain module there
if str(REPO / "tests" / "agents") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "agents"))

_ns_why = runtime_problem()
_ns_ok = _ns_why is None
needs_sandbox = pytest.mark.skipif(not _ns_ok, reason=f"local backend unavailable: {_ns_why}")


def bundled_seed_cases() -> list[Path]:
    return sorted(SEED_CASES.glob("*.yaml"))


def seed_case(name: str) -> SeedCase:
    return SeedCase.load(SEED_CASES / f"{name}.yaml")

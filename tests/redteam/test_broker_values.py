"""Red team: the values the broker hands back cannot lie (issue 39).

``tests/agentcall.py`` runs the agent's code as nobody and hands the tests what it returned. Three ways the
agent's code could still decide a verdict through those values: an object whose class answers ``bool`` or
``==`` as it likes (``assert mod.is_valid(x)`` passed for any object before), an exception class its module
names that decodes to a built-in (``ValidationError = Exception`` made ``pytest.raises(models.ValidationError)``
catch a crash), and a child that writes half a reply and stalls (the broker waited in ``readline`` until the
verifier's timeout). Each test here runs real trials in the local sandbox.
"""

from __future__ import annotations

import asyncio
import random
import shlex
import shutil
from pathlib import Path

import pytest

from autoenv.families.base import pytest_test_sh
from autoenv.families.registry import FAMILIES
from autoenv.grading import AGENTCALL
from autoenv.proposer.models import SeedCase
from autoenv.trials.runner import arun_many
from tests.conftest import EXAMPLE_TASKS, needs_namespaces
from tests.redteam.attacker import IMPORT_PATH

pytestmark = [needs_namespaces, pytest.mark.slow]

#: The agent's module of the probe task: each function is one of the shapes above.
PROBE_MODULE = """\
import os, sys, time


class Anything:
    def __bool__(self):
        return True

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


ValidationError = Exception  # the alias: the tests' pytest.raises(mod.ValidationError) must not catch everything


def is_valid(text):
    return Anything()


def boom():
    raise ValueError("bad value")


def die():
    os._exit(0)


def half_a_reply():
    os.write(int(sys.argv[2]), b'{"ok": tr')  # the child's reply pipe: the start of a reply, then a stall
    time.sleep(600)


def answer(*args):
    return 42


def early_reply():
    os.write(int(sys.argv[2]), b'{"ok": 1}\\n')  # a whole reply before the call is done, then no more reading
    time.sleep(600)
"""

#: The probe task's tests: each asserts what the broker must do; reward 1 means every one of them held.
PROBE_TESTS = """\
import time

import pytest
from agentcall import AgentCrashed, AgentError, RemoteValueError, agent_module


def mod(**kw):
    return agent_module("probe", **kw)


def test_a_remote_object_has_no_truth_value_and_no_equality():
    m = mod()
    value = m.is_valid("x")
    uses = (bool, lambda v: v == True, lambda v: v != 1, lambda v: True == v, hash, lambda v: v in [1])  # noqa: E712
    for use in uses:
        with pytest.raises(RemoteValueError, match="compare plain data"):
            use(value)
    with pytest.raises(TypeError):  # what a test that asserts on it gets: an error, never a pass
        assert m.is_valid("x")
    assert m.answer() == 42  # plain values are themselves


def test_an_aliased_exception_is_a_stand_in_that_catches_nothing_else():
    m = mod()
    alias = m.ValidationError
    assert alias is not Exception and issubclass(alias, AgentError)
    with pytest.raises(AgentCrashed):  # a crash is not the agent's ValidationError
        with pytest.raises(alias):
            m.die()
    with pytest.raises(ValueError):  # the agent's built-in exceptions still match their type
        with pytest.raises(alias):
            mod().boom()
    with pytest.raises(AssertionError):
        with pytest.raises(alias):
            raise AssertionError("the grader's own")


def test_half_a_reply_fails_the_call_within_its_timeout():
    m = mod(timeout=3)
    start = time.monotonic()
    with pytest.raises(AgentCrashed, match="no complete reply"):
        m.half_a_reply()
    assert time.monotonic() - start < 20
    assert mod().answer() == 42  # and the grading goes on


def test_a_child_that_stops_reading_fails_the_next_call_within_its_timeout():
    m = mod(timeout=3)
    assert m.early_reply() == 1
    start = time.monotonic()
    with pytest.raises(AgentCrashed, match="took no call"):
        m.run("result = 42", big="x" * (1 << 20))  # one request, more than a pipe holds: no waiting on the write
    assert time.monotonic() - start < 20
    assert mod().answer() == 42
"""


def probe_task(root: Path) -> Path:
    """fix-median-bug's image and settings, with the probe module in /app and the probe tests."""
    task = root / "broker-probe"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    shutil.rmtree(task / "tests")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(pytest_test_sh())
    (task / "tests" / "test_outputs.py").write_text(PROBE_TESTS)
    (task / "tests" / "agentcall.py").write_text(AGENTCALL)
    (task / "environment" / "app" / "probe.py").write_text(PROBE_MODULE)
    return task


def test_the_broker_refuses_the_values_that_could_lie(tmp_path):
    (outcome,) = asyncio.run(arun_many([(probe_task(tmp_path), "nop")], trials_dir=tmp_path / "trials"))
    log = (Path(outcome.trial_dir) / "verifier" / "test-stdout.txt").read_text()
    assert outcome.reward == 1.0, log[-3000:]
    assert "4 passed" in log, log[-3000:]


#: Appended to every module of the agent's in the broker tasks. ``truthy``: each public function (and method)
#: returns an object that is truthy and equal to anything. ``alias``: each exception class the module defines
#: becomes ``Exception`` and each public function ends the agent's process (a crash the tests' ``pytest.raises``
#: of the alias caught when it decoded to the built-in).
LYING_PRELUDE = """
import os as _os


class _Anything:
    def __bool__(self):
        return True

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__

    def __getattr__(self, name):
        return self

    def __call__(self, *a, **k):
        return self


def _truthy(f):
    def g(*a, **k):
        return _Anything()
    return g


def _crash(f):
    def g(*a, **k):
        _os._exit(0)
    return g


"""
LYING_LOOP = """
for _n, _v in list(globals().items()):
    if _n.startswith("_"):
        continue
    if isinstance(_v, type) and issubclass(_v, BaseException):
        if _LIE is _crash:
            globals()[_n] = Exception
    elif isinstance(_v, type) and _v.__module__ == __name__:
        for _a, _f in list(vars(_v).items()):
            if callable(_f) and not _a.startswith("__"):
                setattr(_v, _a, _LIE(_f))
    elif callable(_v) and getattr(_v, "__module__", None) == __name__:
        globals()[_n] = _LIE(_v)
"""
LIES = {"truthy": "_LIE = _truthy\n", "alias": "_LIE = _crash\n"}


def lie_script(lie: str) -> str:
    code = LYING_PRELUDE + LIES[lie] + LYING_LOOP
    return (
        "set -u\n"
        f"printf '%s\\n' {shlex.quote(code)} > /tmp/lie.py\n"
        "find /app -name '*.py' -not -path '*/solution/*' | while read -r f; do\n"
        '  cat /tmp/lie.py >> "$f" && echo "CHEAT $f"\n'
        "done\n"
    )


@pytest.mark.parametrize("lie", sorted(LIES))
def test_lying_values_get_reward_zero_on_the_broker_tasks(tmp_path, lie):
    """On every task whose tests call the agent's modules through the broker (two bundled, the bugfix family)."""
    case = SeedCase(id="rt-bugfix", task="t", failure_mode="t", target_skill="t", family="bugfix")
    bugfix = FAMILIES["bugfix"].draft(case, random.Random(7)).write(tmp_path / "tasks")
    targets = [EXAMPLE_TASKS / "fix-median-bug", EXAMPLE_TASKS / "inventory-api-multi-tests", bugfix]
    jobs = [(t, IMPORT_PATH, {"script": lie_script(lie)}) for t in targets]
    outcomes = asyncio.run(arun_many(jobs, n_concurrent=2, trials_dir=tmp_path / "trials"))
    for outcome in outcomes:
        assert (Path(outcome.trial_dir) / "agent" / "attack.txt").read_text().count("CHEAT ") >= 1
        assert outcome.error is None, outcome.error_message
    assert [(o.task, o.reward) for o in outcomes if o.reward != 0.0] == []

"""``autoenv task harden`` (issue 41): a task whose tests import the agent's code, made safe to train on unchanged.

The fixtures in ``pre_broker/`` are the bundled ``fix-median-bug`` and ``inventory-api-multi-tests`` as they were
before issue 25 converted them to the broker by hand (``git show be32c3a^`` and ``8943425^``): pytest imports the
agent's module. As they are, the adversary's ``inject`` cheats win (tamper); hardened by the command, the very same
test files run through the broker and every cheat gets 0 while the reference solution still gets 1. The slow tests
run real trials in real sandboxes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from harbor.models.task.task import Task

from autoenv.grading import AGENTCALL
from autoenv.taskfmt.check import check_task, errors
from autoenv.taskfmt.harden import HOOK_PATH, HardenError, harden
from autoenv.trials.runner import arun_many
from tests.conftest import needs_namespaces

HERE = Path(__file__).parent
PRE = HERE / "pre_broker"
REPO = HERE.parent.parent
REVIEWED = REPO / "tests" / "validate" / "reviewed"
LABELS = tomllib.loads((REVIEWED / "labels.toml").read_text())
HARDENED_LABELS = sorted(name for name, label in LABELS.items() if "hardened_verdict" in label)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_harden_keeps_the_tests_and_runs_them_through_the_broker(tmp_path):
    src = PRE / "inventory-api-multi-tests"
    before = _digest(src)
    done = harden(src, tmp_path / "out")
    out = done.task
    assert _digest(src) == before  # the source task is left as it was
    assert done.roots == ["/app"] and done.tests == ["test_models.py", "test_api.py", "test_storage.py"]
    for name in done.tests:  # the tests, unchanged in what they assert: byte for byte
        assert (out / "tests" / name).read_bytes() == (src / "tests" / name).read_bytes()
    assert (out / "tests" / "agentcall.py").read_text() == AGENTCALL
    assert (out / "tests" / "agentimport.py").read_text() == HOOK_PATH.read_text()
    script = (out / "tests" / "test.sh").read_text()
    assert "python3 -I /tests/agentcall.py grade --" in script and "-p agentimport" in script
    assert '"$T"/test_models.py "$T"/test_api.py "$T"/test_storage.py' in script
    verdict = script.index("echo 1 > /logs/verifier/reward.txt")
    assert script.index("rm -f /logs/verifier/reward.json") < script.index("grade --") < verdict
    assert Task(out).config.verifier.environment_mode == Task(src).config.verifier.environment_mode
    assert errors(check_task(out)) == []


#: Uses of the agent's code the broker cannot serve, appended to the pre-broker median tests (line 112 on).
UNSERVED = {
    "monkeypatch": (
        "def test_x(monkeypatch, su):\n    monkeypatch.setattr(su, 'median', lambda v: 0)\n",
        "patches the agent's code",
    ),
    "mock.patch": (
        "from unittest import mock\n\n\n@mock.patch('stats_utils.mean')\ndef test_y(m):\n    pass\n",
        "patches the agent's code",
    ),
    "assignment": ("def test_z(su):\n    su.median = sorted\n", "replaces su.median"),
    "callable": ("def key(v):\n    return v\n\n\ndef test_c(su):\n    su.summarize(key)\n", "the tests' own key"),
    "lambda": ("def test_l(su):\n    su.mean(lambda: 1)\n", "passes a lambda"),
    "inspect": ("import inspect\n\n\ndef test_i(su):\n    inspect.getsource(su.median)\n", "reads the agent's source"),
    "open": ("def test_o():\n    assert 'sorted' in open('/app/stats_utils.py').read()\n", "reads the agent's source"),
    "popen": ("def test_p():\n    subprocess.Popen(['python3', '/app/report.py'])\n", "run_agent cannot serve"),
    "runpy": ("import runpy\n\n\ndef test_r():\n    runpy.run_path('/app/report.py')\n", "by path"),
}


@pytest.mark.parametrize("kind", sorted(UNSERVED))
def test_what_cannot_be_served_is_refused_with_file_and_line(tmp_path, kind):
    code, needle = UNSERVED[kind]
    src = Path(shutil.copytree(PRE / "fix-median-bug", tmp_path / "fix-median-bug"))
    tests = src / "tests" / "test_outputs.py"
    lines = tests.read_text().count("\n")
    tests.write_text(tests.read_text() + "\n\n" + code)
    out = tmp_path / "out" / "median"
    with pytest.raises(HardenError) as raised:
        harden(src, out)
    message = str(raised.value)
    assert needle in message, message
    problem_lines = {p.line for p in raised.value.problems}
    assert all(line and line > lines for line in problem_lines), message  # the appended lines, none of the rest
    assert f"{tests}:" in message
    assert not out.exists() and not (tmp_path / "out").exists()  # nothing half-written, not even the folder above


def test_the_unchanged_tasks_harden_without_a_problem(tmp_path):
    for name in ("fix-median-bug", "inventory-api-multi-tests"):
        harden(PRE / name, tmp_path / name)
    for name in HARDENED_LABELS:
        harden(REVIEWED / name, tmp_path / name)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "autoenv.cli.main", "task", "harden", *args], capture_output=True, text=True, env=env
    )


def test_cli_harden(tmp_path):
    done = _cli(str(PRE / "fix-median-bug"), "--out", str(tmp_path / "median"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hardened" in done.stdout + done.stderr and (tmp_path / "median" / "tests" / "agentimport.json").is_file()
    again = _cli(str(PRE / "fix-median-bug"), "--out", str(tmp_path / "median"))
    assert again.returncode == 2 and "already exists" in again.stdout + again.stderr
    src = Path(shutil.copytree(PRE / "fix-median-bug", tmp_path / "src"))
    tests = src / "tests" / "test_outputs.py"
    tests.write_text(tests.read_text() + "\n\n" + UNSERVED["monkeypatch"][0])
    refused = _cli(str(src), "--out", str(tmp_path / "refused"))
    output = refused.stdout + refused.stderr
    assert refused.returncode == 2, output
    assert "cannot be hardened" in output and "test_outputs.py:" in output and "monkeypatch.setattr" in output
    assert not (tmp_path / "refused").exists()


# -- real trials ----------------------------------------------------------------------------------------------


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("name", ["fix-median-bug", "inventory-api-multi-tests"])
def test_the_pre_broker_task_is_rejected_as_it_is(tmp_path, name):
    from autoenv.validate.validation import validate_task

    task = Path(shutil.copytree(PRE / name, tmp_path / name))
    report = validate_task(task, trials_dir=tmp_path / "trials")
    assert [c.name for c in report.failed] == ["tamper"], report.feedback()
    assert "'inject' cheats alone suffice" in report.check("tamper").summary


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("name", ["fix-median-bug", "inventory-api-multi-tests"])
def test_the_hardened_task_is_valid_and_no_cheat_wins(tmp_path, name):
    from autoenv.validate.validation import validate_task
    from tests.redteam.attacker import IMPORT_PATH
    from tests.redteam.test_agent_code_in_judge import CHEATS, attack_script

    task = harden(PRE / name, tmp_path / name).task
    report = validate_task(task, trials_dir=tmp_path / "validate")
    assert report.valid, report.feedback()
    jobs = [(task, "oracle"), (task, "nop"), (task, "autoenv.agents.adversary:AdversaryAgent", {"cheats": "inject"})]
    jobs += [(task, IMPORT_PATH, {"script": attack_script(CHEATS[c])}) for c in ("exit0", "reports", "frames")]
    oracle, nop, inject, *cheats = asyncio.run(arun_many(jobs, n_concurrent=2, trials_dir=tmp_path / "trials"))
    assert (oracle.reward, nop.reward) == (1.0, 0.0), (oracle.error_message, nop.error_message)
    assert inject.reward == 0.0
    assert "injected_module" in (Path(inject.trial_dir) / "agent" / "adversary.json").read_text()
    for outcome in cheats:  # each cheat went into the agent's modules, and none decided the reward
        assert (Path(outcome.trial_dir) / "agent" / "attack.txt").read_text().count("CHEAT ") >= 1
    assert [(o.reward, o.error) for o in cheats] == [(0.0, None)] * 3


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("name", HARDENED_LABELS)
def test_the_reviewed_task_is_valid_once_hardened(tmp_path, name):
    """The reviewed task is rejected as it is (tests/validate/test_reviewed.py checks its label); hardened, valid."""
    from autoenv.validate.validation import validate_task

    task = harden(REVIEWED / name, tmp_path / name).task
    report = validate_task(task, trials_dir=tmp_path / "trials")
    assert report.valid == (LABELS[name]["hardened_verdict"] == "valid"), report.feedback()


#: The median fixed, but sorting the caller's list in place: only the test that the input is left intact fails.
SORTS_IN_PLACE = (
    "\nsed -i 's/^    data = sorted(values)$/    data = sorted(values)\\n    if isinstance(values, list):\\n"
    "        values[:] = data/' /app/stats_utils.py\ngrep -q 'values\\[:\\] = data' /app/stats_utils.py && echo 'CHEAT "
    "sorts in place'\n"
)


@needs_namespaces
@pytest.mark.slow
def test_a_call_that_changes_its_arguments_is_seen_by_the_tests(tmp_path):
    """The broker copies arguments to the agent's process; what the call did to them comes back, so the test that
    the input list is left intact still fails for a median that sorts it in place."""
    from tests.redteam.attacker import IMPORT_PATH

    task = harden(PRE / "fix-median-bug", tmp_path / "median").task
    fix = (PRE / "fix-median-bug" / "solution" / "solve.sh").read_text()
    (outcome,) = asyncio.run(
        arun_many([(task, IMPORT_PATH, {"script": fix + SORTS_IN_PLACE})], trials_dir=tmp_path / "trials")
    )
    assert "CHEAT sorts in place" in (Path(outcome.trial_dir) / "agent" / "attack.txt").read_text()
    log = (Path(outcome.trial_dir) / "verifier" / "test-stdout.txt").read_text()
    assert outcome.reward == 0.0, log[-3000:]
    assert "FAILED test_outputs.py::test_median_does_not_mutate_input" in log and "1 failed, 15 passed" in log, log


def test_harden_tasks_hardens_what_needs_it_and_keeps_a_copy_made_before(tmp_path):
    from autoenv.taskfmt.harden import harden_tasks

    src = tmp_path / "src"
    for name in ("fix-median-bug", "inventory-api-multi-tests"):
        shutil.copytree(PRE / name, src / name)
    shutil.copytree(REPO / "examples" / "tasks" / "fix-median-bug", src / "median-broker")  # converted by hand
    tests = src / "inventory-api-multi-tests" / "tests" / "test_models.py"
    tests.write_text(tests.read_text() + "\n\ndef test_src():\n    import inspect\n    inspect.getsource(Item)\n")
    tasks = sorted(src.iterdir())
    outcomes = {o.task.name: o for o in harden_tasks(tasks, tmp_path / "out")}
    assert (
        outcomes["fix-median-bug"].hardened
        and outcomes["fix-median-bug"].validated == tmp_path / "out" / "fix-median-bug"
    )
    assert not outcomes["inventory-api-multi-tests"].hardened
    assert outcomes["inventory-api-multi-tests"].validated == src / "inventory-api-multi-tests"
    assert "test_models.py:" in outcomes["inventory-api-multi-tests"].reason
    assert "reads the agent's source" in outcomes["inventory-api-multi-tests"].reason
    # converted to the broker by hand, but its tests read /app/latencies.txt from the agent's copy (artifacts):
    # hardened for that input alone (restored as the image ships it), its broker left as it was
    median = outcomes["median-broker"]
    assert median.hardened and median.validated == tmp_path / "out" / "median-broker"
    assert (median.validated / "tests" / "autoenv-inputs.json").is_file()
    assert not (median.validated / "tests" / "agentimport.json").is_file()
    # run again: the copy made before (and the verdict recorded in it) is kept
    marker = tmp_path / "out" / "fix-median-bug" / ".autoenv" / "validation.json"
    marker.parent.mkdir()
    marker.write_text("{}")
    harden_tasks(tasks, tmp_path / "out")
    assert marker.is_file()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fix-median-bug", "median-broker"]


@needs_namespaces
@pytest.mark.slow
def test_validate_harden_audits_a_dataset_with_the_hardened_copies(tmp_path):
    """``autoenv validate DATASET --harden OUT``: the task that can be hardened is valid, the one whose tests patch
    the agent's code is validated as it is (and rejected), the one with nothing to harden as it is."""
    dataset = tmp_path / "dataset"
    shutil.copytree(REVIEWED / "tb-ledger-package", dataset / "tb-ledger-package")
    shutil.copytree(REVIEWED / "jq-active-users", dataset / "jq-active-users")
    median = Path(shutil.copytree(PRE / "fix-median-bug", dataset / "fix-median-bug"))
    tests = median / "tests" / "test_outputs.py"
    tests.write_text(tests.read_text() + "\n\n" + UNSERVED["monkeypatch"][0])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "autoenv.cli.main", "validate", str(dataset), "--harden", str(tmp_path / "hardened"),
         "--trials-dir", str(tmp_path / "trials"), "--db", str(tmp_path / "audit.db"), "--json"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "hardened: tb-ledger-package" in done.stderr
    assert "not hardened: fix-median-bug" in done.stderr and "test_outputs.py:" in done.stderr
    assert "harden: 1 hardened, 1 could not be, 1 as they were" in done.stderr
    audit = json.loads(done.stdout)
    verdicts = {e["task_name"]: (e["valid"], e["failed"]) for e in audit["entries"]}
    assert verdicts == {
        "tb-ledger-package": (True, []),
        "jq-active-users": (True, []),
        "fix-median-bug": (False, ["tamper"]),
    }


def test_export_harden_refuses_a_task_it_cannot_serve_and_writes_nothing(tmp_path):
    """``export-harbor --harden``: a task whose tests patch the agent's module cannot be hardened; the export stops
    with its file and line, and neither the dataset nor a staging folder is left behind."""
    src = tmp_path / "src"
    median = Path(shutil.copytree(PRE / "fix-median-bug", src / "fix-median-bug"))
    shutil.copytree(REPO / "examples" / "tasks" / "csv-statistic", src / "csv-statistic")
    tests = median / "tests" / "test_outputs.py"
    tests.write_text(tests.read_text() + "\n\n" + UNSERVED["monkeypatch"][0])
    line = len(tests.read_text().splitlines())  # the monkeypatch line is the file's last
    done = subprocess.run(
        [sys.executable, "-m", "autoenv.cli.main", "export-harbor", str(tmp_path / "ds"), "--from", str(src),
         "--harden"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "fix-median-bug: cannot be hardened" in done.stderr and f"test_outputs.py:{line}" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@needs_namespaces
@pytest.mark.slow
def test_export_harden_writes_a_dataset_harbor_runs_with_the_agent_code_behind_the_broker(tmp_path):
    """The pre-broker task exported with ``--harden`` is the hardened task (its tests unchanged, the hook beside
    them), the task that needs nothing is copied as it is, and Harbor's own ``harbor run`` passes both with the
    oracle; a cheat that rewrites pytest's outcome from the agent's module gets 0 through the exported task."""
    from autoenv.sandbox.backends import LOCAL_IMPORT_PATH

    src = tmp_path / "src"
    shutil.copytree(PRE / "fix-median-bug", src / "fix-median-bug")
    shutil.copytree(REPO / "examples" / "tasks" / "csv-statistic", src / "csv-statistic")
    dataset = tmp_path / "ds"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "autoenv.cli.main", "export-harbor", str(dataset), "--from", str(src), "--harden"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "with the agent's code behind the broker: 1 of 2 (fix-median-bug)" in done.stdout + done.stderr
    exported = dataset / "fix-median-bug" / "tests"
    assert (exported / "agentimport.json").is_file() and (exported / "agentcall.py").read_text() == AGENTCALL
    assert (exported / "test_outputs.py").read_bytes() == (src / "fix-median-bug/tests/test_outputs.py").read_bytes()
    assert _digest(dataset / "csv-statistic") == _digest(src / "csv-statistic")
    jobs = tmp_path / "jobs"
    run = subprocess.run(
        [str(Path(sys.executable).parent / "harbor"), "run", "-p", str(dataset), "-a", "oracle", "-e",
         LOCAL_IMPORT_PATH, "-n", "2", "-o", str(jobs)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    stats = json.loads(next(jobs.glob("*/result.json")).read_text())["stats"]
    assert stats["n_completed_trials"] == 2 and stats["n_errored_trials"] == 0, stats
    assert [m["mean"] for e in stats["evals"].values() for m in e["metrics"]] == [1.0]
    cheat = subprocess.run(
        [str(Path(sys.executable).parent / "harbor"), "run", "-p", str(dataset), "-i", "fix-median-bug", "-a",
         "autoenv.agents.adversary:AdversaryAgent", "--ak", "cheats=inject", "-e", LOCAL_IMPORT_PATH,
         "-o", str(tmp_path / "cheat-jobs")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert cheat.returncode == 0, cheat.stdout[-2000:] + cheat.stderr[-2000:]
    stats = json.loads(next((tmp_path / "cheat-jobs").glob("*/result.json")).read_text())["stats"]
    assert stats["n_completed_trials"] == 1 and stats["n_errored_trials"] == 0, stats
    assert [m["mean"] for e in stats["evals"].values() for m in e["metrics"]] == [0.0]
    assert list((tmp_path / "cheat-jobs").rglob("adversary.json")), "the cheat did not run"

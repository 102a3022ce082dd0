"""Red team: a program of the agent's that the tests run looks for the tests' files (issue 39).

The tests of many tasks run a program the agent wrote or may edit (``predict.py``, ``tally.sh``, the launcher of
a config). Run as the tests' own user, such a program read ``test_outputs.py`` (the expected values) or the
hidden inputs beside it: ``mlp_rebuild`` handed ``predict.py`` the path of ``unseen_inputs.csv`` next to
``EXPECTED_UNSEEN``. The tests now start every such program through ``tests/agentcall.py`` (``run_agent``: as
nobody, in a process group of its own) and put its inputs in a folder away from the tests.

Here every program the instruction names, and every ``.py``/``.sh`` under /app, is replaced by a reader: it looks
for the task's test files (by name) in /tests, /tmp, every folder it can walk and every process's cwd, tries
other processes' memory and environment, prints ``PEEK-READ`` for whatever it could open and exits 1, so that the
tests print its output. On every bundled task and a task of every family whose tests run the agent's programs,
the reader runs (``PEEK-RAN`` is in the verifier's log) and reads nothing; the reward is 0. The control: the same
reader, run by the same tests through plain ``subprocess`` (as the grader), reads the test file.
"""

from __future__ import annotations

import asyncio
import random
import re
import shlex
import shutil
from pathlib import Path

import pytest

from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase
from autoenv.trials.runner import arun_many
from tests.conftest import bundled_tasks, needs_namespaces
from tests.redteam.attacker import IMPORT_PATH

pytestmark = [needs_namespaces, pytest.mark.slow]

#: The reader, with ``NAMES`` (the task's test files) filled in.
READER = r"""
import glob, os, sys

NAMES = set(__NAMES__)
me = os.getuid()
found = []


def look(path):
    try:
        with open(path, "rb") as fh:
            data = fh.read(80)
    except OSError:
        return
    found.append("PEEK-READ %s %r" % (path, data[:40]))


paths = set(glob.glob("/tests/**", recursive=True))
for top in ("/", "/tmp", "/var/tmp", "/root", "/logs", "/app"):
    for folder, dirs, files in os.walk(top):
        if folder == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64", "bin", "sbin", "etc")]
        paths.update(os.path.join(folder, f) for f in files)
for pid in filter(str.isdigit, os.listdir("/proc")):
    for sub in ("cwd", "root/tmp"):
        try:
            paths.update(os.path.join("/proc", pid, sub, f) for f in os.listdir(os.path.join("/proc", pid, sub)))
        except OSError:
            pass
    try:
        other = os.stat("/proc/" + pid).st_uid != me
    except OSError:
        continue
    if other:
        for private in ("mem", "environ"):
            try:
                os.close(os.open("/proc/%s/%s" % (pid, private), os.O_RDONLY))
                found.append("PEEK-READ /proc/%s/%s (another uid's process)" % (pid, private))
            except OSError:
                pass
for path in sorted(paths):
    if os.path.basename(path) in NAMES and not path.startswith("/app/"):
        look(path)
report = "PEEK-RAN as uid %d\n%s\n" % (me, "\n".join(found))
sys.stdout.write(report)
sys.stderr.write(report)
sys.exit(1)
"""


def reader_script(task: Path) -> str:
    """The agent's commands: the reader at /app/peek_reader.py, and every program of the task replaced by it."""
    names = sorted(p.name for p in (task / "tests").rglob("*") if p.is_file())
    reader = READER.replace("__NAMES__", repr(names))
    programs = set(re.findall(r"/app/[\w./-]+\.(?:py|sh)\b", (task / "instruction.md").read_text()))
    return (
        "set -u\n"
        f"printf '%s\\n' {shlex.quote(reader)} > /app/peek_reader.py\n"
        f"for f in {' '.join(sorted(programs))} $(find /app -name '*.py' -o -name '*.sh'); do\n"
        '  [ "$f" = /app/peek_reader.py ] && continue\n'
        '  mkdir -p "$(dirname "$f")"\n'
        '  case "$f" in\n'
        '    *.sh) printf \'#!/bin/bash\\nexec python3 /app/peek_reader.py "$@"\\n\' > "$f" ;;\n'
        '    *) { echo "#!/usr/bin/env python3"; cat /app/peek_reader.py; } > "$f" ;;\n'
        "  esac\n"
        '  chmod 755 "$f" && echo "CHEAT $f"\n'
        "done\n"
        "chmod 644 /app/peek_reader.py\n"
    )


def runs_agent_programs(task: Path) -> bool:
    tests = [p for p in (task / "tests").glob("*.py") if p.name != "agentcall.py"]
    return any("run_agent(" in p.read_text() for p in tests)


def _one_task_per_family(root: Path) -> list[Path]:
    return [
        family.draft(SeedCase(id=f"rt-{name}", task="t", failure_mode="t", target_skill="t", family=name),
                     random.Random(7)).write(root)
        for name, family in sorted(FAMILIES.items())
    ]  # fmt: skip


def _logs(outcome) -> str:
    log = Path(outcome.trial_dir) / "verifier" / "test-stdout.txt"
    return log.read_text(errors="replace") if log.is_file() else ""


def test_an_agent_program_the_tests_run_reads_none_of_the_tests_files(tmp_path):
    tasks = bundled_tasks() + _one_task_per_family(tmp_path / "families")
    targets = [t for t in tasks if runs_agent_programs(t)]
    # the tasks whose tests run a program of the agent's are all here (a filter that drops one proves nothing)
    names = {t.name for t in targets}
    assert {"etl-pipeline", "log-parser-cli", "redact-pii", "repair-config", "shell-backup-rotation"} <= names
    for family in ("mlp-rebuild", "shell-script", "config-repair", "bugfix"):
        assert any(n.startswith(family) for n in names), (family, names)
    jobs = [(t, IMPORT_PATH, {"script": reader_script(t)}) for t in targets]
    outcomes = asyncio.run(arun_many(jobs, n_concurrent=2, trials_dir=tmp_path / "trials"))
    ran = {o.task: "PEEK-RAN as uid 65534" in _logs(o) for o in outcomes}
    assert [name for name, seen in ran.items() if not seen] == []  # the reader ran, as nobody, in every one
    leaks = {o.task: re.findall(r"PEEK-READ [^\n]*", _logs(o)) for o in outcomes}
    assert {name: found for name, found in leaks.items() if found} == {}
    assert [(o.task, o.reward) for o in outcomes if o.reward != 0.0] == []


def test_control_the_reader_finds_the_test_file_when_the_grader_runs_it(tmp_path):
    """The same reader, run by plain subprocess from the same tests (as the grader, the owner of the tests' copy),
    reads test_outputs.py and the hidden inputs beside it: the search above is one that finds them."""
    family = FAMILIES["mlp-rebuild"]
    case = SeedCase(id="rt-mlp", task="t", failure_mode="t", target_skill="t", family="mlp-rebuild")
    task = family.draft(case, random.Random(7)).write(tmp_path / "tasks")
    control = tmp_path / "mlp-plain-subprocess"
    shutil.copytree(task, control)
    test = control / "tests" / "test_outputs.py"
    test.write_text(
        test.read_text().replace(
            "from agentcall import agent_folder, read_agent_file, run_agent",
            "import subprocess\nfrom agentcall import agent_folder, read_agent_file\n\n\n"
            "def run_agent(argv, text=False, timeout=60):\n"
            "    return subprocess.run([str(a) for a in argv], capture_output=True, text=text, timeout=timeout)\n",
        )
    )
    (outcome,) = asyncio.run(
        arun_many([(control, IMPORT_PATH, {"script": reader_script(control)})], trials_dir=tmp_path / "trials")
    )
    log = _logs(outcome)
    assert "PEEK-RAN as uid 65533" in log, log[-3000:]
    assert re.search(r"PEEK-READ /tmp/[^/\s]+/test_outputs\.py", log), log[-3000:]

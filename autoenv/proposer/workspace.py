"""The proposer's persistent workspace: skills, tools, memory, tasks and the fixed inputs.

One folder per proposer, kept across runs, so that what a proposer learns
(its edited skills, improved tools, the record of what validation said about
earlier attempts) carries over to the next seed case::

    skills/     editable generation skills (markdown) the proposer reads and may rewrite
    tools/      helper scripts it may run and improve (plain Python/shell: they also run
                inside the agentic proposer's sandbox, where autoenv is not installed)
    memory/     retained experience: attempts.jsonl (one line per attempt), lessons.md and solver/<task>.md
                (per calibration rollout: the solver's reward, turns, commands and where it stopped)
    tasks/      every generated task, accepted or not (the verdict is kept next to it)
    FORMAT.md   the Harbor task format spec (fixed input, refreshed on every run)
    seed_case.yaml  the seed case of the current run (fixed input)

Default skills and tools are written only where missing, so a proposer's
edits survive; FORMAT.md and seed_case.yaml are inputs and are overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from autoenv.families.base import pytest_test_sh
from autoenv.grading import AGENTCALL
from autoenv.proposer.models import AttemptRecord, SeedCase
from autoenv.proposer.skills import SKILLS

LAYOUT = ("skills", "tools", "memory", "tasks")

FORMAT_MD = """\
# Harbor task format (what `tasks/<name>/` must contain)

```
tasks/<name>/
  instruction.md          what the agent is asked to do (markdown). Never state the expected results.
  task.toml               metadata and limits (see below)
  environment/Dockerfile  the image the agent works in
  environment/app/...     input files, copied into the image with `COPY app/ /app/`
  solution/solve.sh       reference solution (bash); validation runs it as the "oracle" and it must pass
  tests/test.sh           verifier (bash); must ALWAYS write /logs/verifier/reward.txt (1 pass, 0 fail)
  tests/test_outputs.py   pytest checks called by test.sh (tests/ is uploaded only after the agent finishes),
                          or no Python at all: a bash/awk verifier in test.sh (below)
```

task.toml:

```toml
schema_version = "1.4"
# the agent's /app is collected and the tests run in a fresh sandbox made from the image
artifacts = ["/app"]

[metadata]
difficulty = "medium"
category = "data-analysis"
tags = ["python"]
author_name = "autoenv-proposer"

[verifier]
timeout_sec = 60.0
environment_mode = "separate"

[agent]
timeout_sec = 600.0   # what a capable solver needs for the whole task; the oracle may use at most half

[environment]
build_timeout_sec = 300.0
cpus = 1
memory_mb = 2048
network_mode = "no-network"
```

Dockerfile (any Dockerfile builds; these bases need no registry: python:3.X-slim, debian:bookworm-slim):

```dockerfile
FROM python:3.12-slim
RUN pip install --no-cache-dir pytest==8.3.4
WORKDIR /app
COPY app/ /app/
```

tests/test.sh:

```bash
{TEST_SH}```

{BROKER}
Never import the agent's code into the tests (no `sys.path.insert(0, "/app")`, no `importlib`/`runpy`), and
never start its programs with `subprocess`/`os.system`: a module that calls `os._exit(0)` at import, or rewrites
pytest's reports, would decide the reward, and a program run as the tests' user reads the expected values.
Call it through the broker, which runs it as nobody in a process of its own and hands back plain data:

```python
from agentcall import agent_folder, agent_module, read_agent_file, run_agent
mod = agent_module("stats_utils")          # a fresh import of /app/stats_utils.py, as nobody
assert mod.median([3, 1, 2]) == 2          # results come back as values (tuples stay tuples)
assert mod.is_valid("x") is True           # not `assert mod.is_valid("x")`: compare plain data (see below)
with pytest.raises(ValueError):            # the agent's exceptions by type, its own classes too
    mod.median([])
out = run_agent(["python3", "/app/report.py"], text=True, timeout=30)   # subprocess.run's keywords
work = agent_folder({"in.csv": Path(__file__).with_name("hidden.csv")}, writable=True)  # inputs, away from tests
run_agent(["python3", "/app/predict.py", work / "in.csv", work / "out.csv"], timeout=60)
got = read_agent_file(work / "out.csv")    # what the program wrote, read as nobody
```

The agent's code then can neither write /logs/verifier nor read /tests or the test files. An object that is not
plain data (an instance of the agent's class) comes back as a handle with no truth value, `==` or hash (its
class would decide them: `assert mod.is_valid(x)` would pass for any object), so the test raises a TypeError:
compare plain values (`is True`, `obj.to_dict() == {...}`, `obj.name == "x"`). An exception class the module
names (`mod.ValidationError`) is a stand-in that matches only what the agent raised as that class. Inputs a
program of the agent's reads go in `agent_folder(...)` (pytest's `tmp_path` and the tests' folder are the
grader's alone); never hand it a path next to the tests.

Verifiers for images without Python (a task about shell tools, a minimal base) are as good: tests/test.sh
recomputes or compares every expected value with bash, awk, sort, diff, reads the agent's files as an
unprivileged user (`setpriv --reuid=65534 --regid=65534 --clear-groups cat /app/out.txt`), and writes the
reward on every path:

```bash
#!/bin/bash
mkdir -p /logs/verifier; echo 0 > /logs/verifier/reward.txt
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups cat /app/report.txt 2>/dev/null)
want=$(awk -F, 'NR > 1 {{ s[$1] += $2 }} END {{ for (k in s) print k, s[k] }}' /tests/data.csv | sort)
[ "$got" = "$want" ] && echo 1 > /logs/verifier/reward.txt
```

Rules the validator enforces ({VALIDATE}):

- structure: Harbor can load the task; the solution and a verifier exist; the verifier writes a reward;
  no merge-conflict markers or credentials in any file; no downloads while grading (there is no network);
- build: the Dockerfile builds (no network at run time; tasks must work on Python 3.11 and 3.12);
- oracle: solution/solve.sh passes the tests, every time (deterministic);
- nop: doing nothing scores 0 (the answer must not already be in the image);
- leakage: no solution, tests or expected answers in the image or in instruction.md;
- tamper: an agent that only cheats (forges the reward file, stubs programs, edits tests, leaves
  processes running, writes programs that forge the reward or read the tests' data when the tests
  run them) scores 0: grade in a fresh sandbox (`environment_mode = "separate"`) and run the
  agent's code unprivileged (above);
- partial: the reference solution with its outputs cut in half scores 0 (check content, not existence);
- timeouts: the oracle uses at most half of the agent time limit.

Each finding has a level: an error makes the task invalid; a warning (lint style, unpinned versions,
unknown fields) is worth fixing but changes nothing; a note is a limit of how the task is run. The
feedback lists errors first, each with the file (and line) and what to do.

Then calibration ({SOLVE}) runs the current solver K times (K: the attempt's rollouts, stated in the
brief): a task is accepted when the solver passes sometimes and fails sometimes (at least one of the K
rollouts passes and one fails).
"""
#: the verifier runner every template family writes (one source: templates/base.py)
FORMAT_MD = FORMAT_MD.replace("{TEST_SH}", pytest_test_sh())

#: What the format spec says about the broker and the judging, by whether the method runs commands (agentic)
#: or only writes files (prompt, feedback: the harness copies the broker in and judges each reply).
_FORMAT_BY_METHOD = {
    True: {
        "BROKER": "Copy `tools/agentcall.py` into the task as `tests/agentcall.py`: the runner above starts pytest "
        "through it.",
        "VALIDATE": "`autoenv-child validate tasks/<name>` runs it in a separate sandbox",
        "SOLVE": "`autoenv-child solve tasks/<name>`; `-k K` asks for another number",
    },
    False: {
        "BROKER": "The harness copies the broker into the task as `tests/agentcall.py` whenever `tests/test.sh` names "
        "it (do not write it yourself): the runner above starts pytest through it.",
        "VALIDATE": "the harness runs it on the files of each reply, in separate sandboxes",
        "SOLVE": "run by the harness on a valid task",
    },
}


def format_md(*, runs: bool) -> str:
    """The format spec for a method that runs commands (``runs``: agentic) or one that only writes files."""
    text = FORMAT_MD
    for key, value in _FORMAT_BY_METHOD[runs].items():
        text = text.replace("{" + key + "}", value)
    return text


CHECK_TASK_PY = '''\
#!/usr/bin/env python3
"""Static pre-flight check of a task folder (standard library only; runs anywhere).

    python3 tools/check_task.py tasks/<name>

Catches the cheap mistakes before a sandboxed validation is spent on them.
"""
import re
import sys
from pathlib import Path

task = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
problems = []
for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "solution/solve.sh", "tests/test.sh"):
    if not (task / rel).is_file():
        problems.append(f"missing {rel}")
docker = (task / "environment/Dockerfile").read_text() if (task / "environment/Dockerfile").is_file() else ""
if (task / "environment/app").is_dir() and not re.search(r"^(COPY|ADD)\\s+app/?\\s", docker, re.M):
    problems.append("environment/app exists but the Dockerfile never copies it (COPY app/ /app/)")
test_sh = (task / "tests/test.sh").read_text() if (task / "tests/test.sh").is_file() else ""
if test_sh and "/logs/verifier/reward" not in test_sh:
    problems.append("tests/test.sh never writes /logs/verifier/reward.txt")
if re.search(r"^set -e", test_sh, re.M):
    problems.append("tests/test.sh uses set -e: a failing check would skip the reward line")
if "agentcall.py" in test_sh and not (task / "tests/agentcall.py").is_file():
    problems.append("tests/test.sh runs pytest through tests/agentcall.py: copy tools/agentcall.py there")
for p in (task / "tests").glob("*.py") if (task / "tests").is_dir() else []:
    if p.name != "agentcall.py" and re.search(r"sys\\.path\\.(insert|append)\\([^)]*[\\"']/app", p.read_text()):
        problems.append(f"{p.relative_to(task)}: imports the agent's code into pytest; use agentcall.agent_module")
    text = p.read_text()
    if p.name != "agentcall.py" and "/app" in text and re.search(r"\\b(subprocess|runpy)\\.|\\bos\\.(system|popen|exec)", text):
        problems.append(f"{p.relative_to(task)}: starts programs itself and names /app: run the agent's programs with "
                        "agentcall.run_agent (as nobody), never as the grader, which can read the tests")
toml = (task / "task.toml").read_text() if (task / "task.toml").is_file() else ""
if toml and not re.search(r'^environment_mode\\s*=\\s*"separate"', toml, re.M):
    problems.append('task.toml: grade in a fresh sandbox: environment_mode = "separate" under [verifier], artifacts = ["/app"] at the top')
if toml and 'network_mode = "no-network"' not in toml:
    problems.append('task.toml: set network_mode = "no-network" in [environment]')
for p in (task / "environment").rglob("*") if (task / "environment").is_dir() else []:
    if p.is_file() and p.name.startswith("test_") and p.suffix == ".py":
        problems.append(f"{p.relative_to(task)}: a test file inside the image")
print("\\n".join(problems) if problems else "OK: no static problems found")
sys.exit(1 if problems else 0)
'''  # noqa: E501


def _tools() -> dict[str, str]:
    return {"check_task.py": CHECK_TASK_PY, "agentcall.py": AGENTCALL}


class Workspace:
    """A proposer workspace on the host (see the module docstring for the layout)."""

    #: Inputs the harness writes for every attempt; never taken back from a proposer's copy.
    INPUTS = ("FORMAT.md", "seed_case.yaml")

    def __init__(self, root: Path | str):
        self.root = Path(root).resolve()
        # the layout: skills/, tools/, memory/ (attempts.jsonl, lessons.md) and tasks/
        self.skills, self.tools = self.root / "skills", self.root / "tools"
        self.memory, self.tasks = self.root / "memory", self.root / "tasks"
        self.attempts_file, self.lessons_file = self.memory / "attempts.jsonl", self.memory / "lessons.md"

    def init(self) -> Workspace:
        """Create the layout; write default skills/tools only where none exist (edits are kept)."""
        for name in LAYOUT:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.root / "FORMAT.md").write_text(format_md(runs=True))
        for name, text in SKILLS.items():
            path = self.skills / name
            if not path.exists():
                path.write_text(text)
        for name, text in _tools().items():
            path = self.tools / name
            if not path.exists():
                path.write_text(text)
                path.chmod(0o755)
        if not self.lessons_file.exists():
            self.lessons_file.write_text("# Lessons from validation\n\n")
        return self

    def set_seed_case(self, case: SeedCase) -> Path:
        path = self.root / "seed_case.yaml"
        case.dump(path)
        return path

    # -- memory ----------------------------------------------------------------------

    def remember(
        self,
        record: AttemptRecord,
        *,
        family: str | None = None,
        params: dict[str, Any] | None = None,
        repairs: list[str] | None = None,
        feedback: str | None = None,
    ) -> None:
        """Append one attempt to memory, and a lesson for every repair validation forced."""
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "seed_case": record.seed_case,
            "method": record.method,
            "proposer": record.proposer,
            "attempt": record.attempt,
            "task": Path(record.task_dir).name if record.task_dir else None,
            "family": family,
            "valid": record.valid,
            "calibrated": record.calibrated,
            "pass_rate": record.pass_rate,
            "reward": record.reward,
            "rounds": record.rounds,
            "reason": record.reason,
            "repairs": repairs or [],
            "params": {k: v for k, v in (params or {}).items() if isinstance(v, (str, int, float, bool)) or v is None},
            "feedback": (feedback or "")[:4000] or None,
        }
        self.memory.mkdir(parents=True, exist_ok=True)
        with open(self.attempts_file, "a") as fh:
            fh.write(json.dumps(entry) + "\n")
        lines = []
        for fix in repairs or []:
            lines.append(f"- {entry['time']} {record.seed_case} ({family or 'new'}): {fix}")
        if not record.valid and record.reason and not repairs:
            lines.append(
                f"- {entry['time']} {record.seed_case} ({family or 'new'}): rejected, not repaired: "
                f"{record.reason.splitlines()[0][:200]}"
            )
        if record.valid and not record.calibrated and record.reason:
            lines.append(
                f"- {entry['time']} {record.seed_case} ({family or 'new'}): "
                + ("" if record.reason.startswith("valid") else "valid, ")
                + record.reason.splitlines()[0][:160]
            )
        if lines:
            with open(self.lessons_file, "a") as fh:
                fh.write("\n".join(lines) + "\n")

    def history(self, seed_case: str | None = None) -> list[dict[str, Any]]:
        """Past attempts (optionally for one seed case), oldest first."""
        if not self.attempts_file.is_file():
            return []
        out = []
        for line in self.attempts_file.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if seed_case is None or entry.get("seed_case") == seed_case:
                out.append(entry)
        return out

    def solver_runs(self, task_name: str, text: str) -> Path:
        """Append what the solver did in one calibration of ``task_name`` to ``memory/solver/<task>.md``."""
        path = self.memory / "solver" / f"{task_name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as fh:
            fh.write(solver_entry(text))
        return path

    def lessons(self) -> str:
        return self.lessons_file.read_text() if self.lessons_file.is_file() else ""

    def sync_from(self, other: Path) -> None:
        """Take the workspace back from a copy the agentic proposer edited: skills/, tools/, memory/, tasks/
        and anything else it made there (a generator its lessons refer to must still be there next attempt)."""
        for source in sorted(Path(other).iterdir()):
            name = source.name
            if name in LAYOUT or name in self.INPUTS or name.startswith("."):
                continue
            target = self.root / name
            if source.is_dir() and not source.is_symlink():
                shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
            elif source.is_file() and not source.is_symlink():
                shutil.copy2(source, target)
        for name in LAYOUT:
            source = Path(other) / name
            if not source.is_dir():
                continue
            target = self.root / name
            if name == "memory":
                # the harness appends to memory while the sandbox holds an older copy: keep the longer files
                for path in source.rglob("*"):
                    if path.is_file():
                        dest = target / path.relative_to(source)
                        if not dest.exists() or path.stat().st_size > dest.stat().st_size:
                            dest.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copy2(path, dest)
            elif name == "tasks":
                for task in sorted(p for p in source.iterdir() if p.is_dir()):
                    mirror_task(task, target / task.name)
            else:
                shutil.copytree(source, target, dirs_exist_ok=True)

    def files_for_sandbox(self) -> list[Path]:
        """Top-level entries to copy into the proposer's sandbox (everything but private bookkeeping)."""
        return [p for p in sorted(self.root.iterdir()) if not p.name.startswith(".")] if self.root.is_dir() else []


def solver_entry(text: str) -> str:
    """One calibration's record in ``memory/solver/<task>.md``: a dated heading and the report."""
    return f"## {time.strftime('%Y-%m-%dT%H:%M:%S')}\n\n{text.strip()}\n\n"


def copy_task(source: Path, dest_root: Path) -> Path:
    """Copy a task folder (verdict records included) to ``dest_root/<name>``, replacing an older copy."""
    dest = Path(dest_root) / source.name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    os.utime(dest)
    return dest


def mirror_task(source: Path, dest: Path) -> Path:
    """Make ``dest`` an exact copy of ``source`` (deleted files go too), keeping dest's verdict records.

    The records are keyed by content hash, so keeping them is safe: they only
    apply if the new content is identical to what was judged.
    """
    records = dest / ".autoenv"
    saved = None
    if records.is_dir():
        saved = dest.parent / f".{dest.name}.autoenv-{os.getpid()}"
        if saved.exists():
            shutil.rmtree(saved)
        shutil.move(str(records), saved)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".autoenv"))
    if saved is not None:
        shutil.move(str(saved), records)
    return dest

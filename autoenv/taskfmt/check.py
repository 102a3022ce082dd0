"""Static checks of a Harbor task: Harbor's own lint plus what autoenv needs.

Harbor's lint judges a task as a *benchmark* item. autoenv also needs every
task to be runnable by its validator: a reference solution (for the oracle
run), a verifier script that writes a reward, an instruction, and, for the
local backend, a Dockerfile inside the subset it can replay.
"""

from __future__ import annotations

import re
from pathlib import Path

from harbor.lint import lint_task
from harbor.lint.models import DEFAULT_RULES, LintRule
from harbor.models.task.task import Task
from pydantic import BaseModel

from autoenv.sandbox.local.image import base_images

#: Shared-mode verifiers are the Terminal-Bench norm; autoenv's validator
#: probes them for tampering instead (see autoenv.validate), so Harbor's
#: "use a separate verifier" advice is not an error here.
RULES = DEFAULT_RULES - {LintRule.SHARED_VERIFIER}

REWARD_FILE = re.compile(r"/logs/verifier/reward\.(txt|json)")


class Problem(BaseModel):
    path: str
    message: str
    rule: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message} [{self.rule}]"


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file()


def find_tasks(path: Path) -> list[Path]:
    """A task directory, or every task directly below a dataset directory."""
    if is_task_dir(path):
        return [path]
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_dir() and is_task_dir(p))
    return []


def check_task(path: Path, *, env: str = "local") -> list[Problem]:
    """All problems found in one task directory; an empty list means well formed."""
    path = Path(path)
    if not path.exists():
        return [Problem(path=str(path), message="no such file or directory", rule="invalid-task-files")]
    if not path.is_dir():
        return [Problem(path=str(path), message="not a task directory (expected a folder with task.toml)", rule="invalid-task-files")]
    problems = [
        Problem(path=f.path, message=f.message, rule=str(f.rule), line=f.line)
        for f in lint_task(path, selected_rules=RULES)
    ]
    if any(p.rule in ("invalid-task-config", "invalid-task-files") and p.path.endswith("task.toml") for p in problems):
        return problems
    try:
        task = Task(path)
    except Exception as exc:  # Harbor's loader is the judge of the format
        problems.append(Problem(path=str(path / "task.toml"), message=f"Harbor cannot load the task: {exc}", rule="invalid-task-config"))
        return problems

    instruction = path / "instruction.md"
    if not instruction.is_file() or not instruction.read_text().strip():
        problems.append(Problem(path=str(instruction), message="instruction is missing or empty", rule="autoenv-instruction"))
    if task.config.steps:
        return problems  # multi-step tasks keep solutions and tests per step
    solve = task.paths.solve_path
    if not solve.is_file():
        problems.append(Problem(path=str(solve), message="reference solution missing; validation runs it as the oracle", rule="autoenv-solution"))
    test_sh = task.paths.test_path
    if not test_sh.is_file():
        problems.append(Problem(path=str(test_sh), message="verifier script missing", rule="autoenv-tests"))
    else:
        tests_text = "\n".join(p.read_text(errors="replace") for p in (path / "tests").rglob("*") if p.is_file() and p.suffix in {".sh", ".py", ""})
        if not REWARD_FILE.search(tests_text):
            problems.append(Problem(path=str(test_sh), message="never writes /logs/verifier/reward.txt or reward.json", rule="autoenv-tests"))
    dockerfile = path / "environment" / "Dockerfile"
    if dockerfile.is_file():
        if not base_images(dockerfile.read_text(errors="replace")):
            problems.append(Problem(path=str(dockerfile), message="no FROM instruction naming a base image", rule="autoenv-environment"))
    elif not task.config.environment.docker_image:
        problems.append(Problem(path=str(dockerfile), message="no Dockerfile and no environment.docker_image", rule="autoenv-environment"))
    return problems

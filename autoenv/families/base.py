"""What every task family shares: the :class:`Family` interface, the draft type, file builders, flaws.

Every family renders a complete Harbor task as a mapping of relative paths to
text, so the same draft can be written to disk by the prompt/feedback methods
or typed file by file through ``write_file`` actions by the agentic proposer.
Realistic first-draft flaws live here too: each one is a mistake task authors
make, and each is caught by a real validation check whose feedback names the
file to repair.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autoenv.families.levels import AXES, Level, with_level
from autoenv.grading import AGENTCALL, GRADED_PYTEST

if TYPE_CHECKING:  # for annotations only
    from autoenv.families.solver import Recipe
    from autoenv.shared.seed import SeedCase


PYTEST_PIN = "pytest==8.3.4"


@dataclass
class TaskDraft:
    """A generated task before it is written: files, parameters and any injected flaw."""

    name: str
    family: str
    files: dict[str, str | bytes]
    executable: set[str] = field(default_factory=set)
    params: dict[str, Any] = field(default_factory=dict)
    flaw: str | None = None
    #: The clean version of every file a flaw changed, so a fixer that has
    #: identified *which* file is wrong can rewrite it as the template meant it.
    clean: dict[str, str | bytes | None] = field(default_factory=dict)

    def write(self, root: Path | str) -> Path:
        """Write the task to ``root/<name>`` (replacing an older version of it)."""
        import shutil

        task_dir = Path(root) / self.name
        if task_dir.exists():
            shutil.rmtree(task_dir)
        write_files(task_dir, self.files, executable=self.executable | {r for r in self.files if r.endswith(".sh")})
        return task_dir

    def summary(self) -> str:
        return (
            f"{self.name} ({self.family}; "
            f"{', '.join(f'{k}={v}' for k, v in self.params.items() if not isinstance(v, (list, dict)))})"
        )


def write_files(
    root: Path, files: dict[str, str | bytes], *, executable: set[str] | frozenset[str] = frozenset()
) -> None:
    """Write ``files`` (relative path -> text or bytes) under ``root``; the ``executable`` ones get mode 755."""
    for rel, data in sorted(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
        if rel in executable:
            path.chmod(0o755)


@dataclass(frozen=True)
class Family:
    """A task family: a generator of complete Harbor tasks from a seed case, and the offline solver's recipe for them.

    ``generate(case, rng[, level=...])`` returns a :class:`TaskDraft`; every draw randomises data, names and the
    exact specification, so two drafts from one seed case are different tasks. ``recipe`` is how the offline
    scripted solver does such a task (None: the scripted policy's own recipes cover it). Families live in
    ``autoenv/families/<name>/`` and are listed in :mod:`autoenv.families.registry`; nothing registers itself.
    """

    name: str
    description: str
    keywords: tuple[str, ...]
    generate: Callable[..., TaskDraft]
    recipe: Recipe | None = None
    #: Graded difficulty the generator takes as ``level=`` (empty: one level); ``default_level`` is used without a
    #: choice.
    levels: tuple[int, ...] = ()
    default_level: int | None = None
    #: For families whose generator writes a folder (office, web): ``write(task_dir, rng, seed_case)``.
    write: Callable[..., None] | None = None
    #: The difficulty ladder (:mod:`autoenv.families.levels`): one :class:`Level` per number in ``levels``, recorded
    #: in every draft's task.toml. Empty for a family with one level.
    ladder: tuple[Level, ...] = ()

    @classmethod
    def of(cls, package: ModuleType) -> Family:
        """The family a folder under ``autoenv/families/`` defines: its ``generator`` module's ``NAME``,
        ``DESCRIPTION``, ``KEYWORDS``, ``generate`` (and ``LADDER``/``DEFAULT_LEVEL`` when graded: ``LADDER`` a
        tuple of :class:`Level`), and its ``recipe`` module's ``RECIPE`` when it has one."""
        gen = package.generator
        recipe = getattr(getattr(package, "recipe", None), "RECIPE", None)
        ladder = tuple(getattr(gen, "LADDER", ()))
        levels = tuple(level.number for level in ladder)
        if levels != tuple(sorted(set(levels))):
            raise ValueError(f"{gen.NAME}: LADDER's levels must be distinct and in order, not {levels}")
        return cls(
            gen.NAME,
            gen.DESCRIPTION,
            gen.KEYWORDS,
            gen.generate,
            recipe,
            levels,
            getattr(gen, "DEFAULT_LEVEL", None),
            ladder=ladder,
        )

    @property
    def axes(self) -> tuple[str, ...]:
        """The axes any level of the family climbs, in :data:`~autoenv.families.levels.AXES` order."""
        return tuple(axis for axis in AXES if any(level.axes.get(axis) for level in self.ladder))

    @property
    def max_level(self) -> int | None:
        return self.levels[-1] if self.levels else None

    def level(self, number: int) -> Level:
        """The ladder's level ``number`` (ValueError naming the family's levels when it has none such)."""
        for level in self.ladder:
            if level.number == number:
                return level
        known = ", ".join(map(str, self.levels)) or "none (one level)"
        raise ValueError(f"family {self.name} has no level {number}; its levels: {known}")

    def draft(self, case: SeedCase, rng: random.Random, level: int | None = None) -> TaskDraft:
        """A task of ``level`` (default: the family's default level), with the level recorded in its task.toml."""
        if not self.levels:
            return self.generate(case, rng)
        number = level if level is not None else self.default_level
        rung = self.level(number)
        draft = self.generate(case, rng, level=number)
        if isinstance(toml := draft.files.get("task.toml"), str):
            draft.files["task.toml"] = with_level(toml, rung)
        draft.params["ladder_level"] = number
        if number != 1 and f"-l{number}-" not in draft.name:  # two levels drawn from one seed: two folder names
            head, _, tail = draft.name.rpartition("-")
            draft.name = f"{head}-l{number}-{tail}" if head else f"{draft.name}-l{number}"
        return draft

    def score(self, words: str) -> int:
        """How many of the family's keywords a seed case's words (:func:`seed_words`) contain: its fit when the
        case names no family."""
        return sum(words.count(k) for k in self.keywords)


#: Grading in a fresh sandbox (Harbor's separate verifier mode): the agent's /app is collected and
#: copied into a new sandbox made from the task's image, where the tests run. Nothing the agent left
#: running, planted on PATH, in site-packages or in PID 1 exists there. Top-level keys come first.
ARTIFACTS_TOML = 'artifacts = ["/app"]\n'


def verifier_toml(timeout_sec: float) -> str:
    return f'[verifier]\ntimeout_sec = {timeout_sec:.1f}\nenvironment_mode = "separate"\n'


def dockerfile(
    *,
    base: str = "python:3.12-slim",
    pytest: bool = True,
    copy_app: bool = True,
    run: list[str] | None = None,
    workdir: str = "/app",
) -> str:
    lines = [f"FROM {base}"]
    if pytest:
        lines.append(f"RUN pip install --no-cache-dir {PYTEST_PIN}")
    lines += [f"RUN {r}" for r in (run or [])]
    lines.append(f"WORKDIR {workdir}")
    if copy_app:
        lines.append(f"COPY app/ {workdir}/")
    return "\n".join(lines) + "\n"


def task_toml(
    *,
    family: str,
    seed_case: str,
    category: str,
    tags: list[str],
    difficulty: str = "medium",
    agent_timeout: float = 120.0,
    verifier_timeout: float = 60.0,
    extra_meta: dict[str, str] | None = None,
) -> str:
    tag_list = ", ".join(f'"{t}"' for t in tags)
    meta = "".join(f'{k} = "{v}"\n' for k, v in (extra_meta or {}).items())
    return (
        textwrap.dedent("""\
        schema_version = "1.4"
        """)
        + ARTIFACTS_TOML
        + textwrap.dedent(f"""\

        [metadata]
        difficulty = "{difficulty}"
        category = "{category}"
        tags = [{tag_list}]
        author_name = "autoenv-proposer"
        family = "{family}"
        seed_case = "{seed_case}"
        """)
        + meta
        + "\n"
        + verifier_toml(verifier_timeout)
        + textwrap.dedent(f"""\

        [agent]
        timeout_sec = {agent_timeout:.1f}

        [environment]
        build_timeout_sec = 300.0
        cpus = 1
        memory_mb = 2048
        network_mode = "no-network"
        """)
    )


#: test.sh lines that keep the verdict out of reach of whatever code the tests run: /logs/verifier is
#: root's alone (Harbor leaves it world-writable, and a reward.json there wins over reward.txt) and
#: /tests is unreadable to others. The tests then run as nobody (below), so an agent's program or module
#: can neither write the verdict nor read the tests' data files.
def task_files(
    case: SeedCase,
    family: str,
    category: str,
    tags: list[str],
    instruction: str,
    solution: str,
    tests: str,
    *,
    app: dict[str, str] | None = None,
    hidden: dict[str, str] | None = None,
    **toml: Any,
) -> dict[str, str]:
    """The files of a pytest-graded family task: the six every task has (instruction, task.toml, Dockerfile,
    solve.sh, test.sh, test_outputs.py), the task's data (``app``: paths under ``environment/app/``) and what
    only the tests see (``hidden``: inputs, labels, next to the tests)."""
    app, support = app or {}, hidden or {}
    return {
        "instruction.md": instruction,
        "task.toml": task_toml(family=family, seed_case=case.id, category=category, tags=tags, **toml),
        "environment/Dockerfile": dockerfile(),
        **{f"environment/app/{rel}": text for rel, text in app.items()},
        "solution/solve.sh": solution,
        "tests/test.sh": pytest_test_sh(*support),
        "tests/test_outputs.py": tests,
        "tests/agentcall.py": AGENTCALL,
        **{f"tests/{rel}": text for rel, text in support.items()},
    }


LOCK_VERDICT = (
    "mkdir -p /logs/verifier\n"
    "# only root writes the verdict: a reward.json the tests or the agent's code left would win over reward.txt\n"
    "chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json\n"
    "chmod -R go-rwx /tests\n"
)


def pytest_test_sh(*support: str, unprivileged: bool = True, prepare: str = "") -> str:
    """tests/test.sh: tests/test_outputs.py (and its ``support`` files) run by the grader from a fresh folder.

    Harbor uploads tests/ into /tests without emptying it, and the agent may have planted files there or
    in /app (a conftest.py, a module shadowing one the tests import). Only the task's own test files are
    copied to a new folder; ``python3 -I`` keeps the working directory off the import path, ``-c /dev/null``
    ignores ini files, ``--noconftest`` any conftest.py (the bundled tasks' verifiers do the same).
    pytest runs as the grader (uid 65533) under the broker ``tests/agentcall.py``, which runs every module and
    program of the agent's as nobody in processes of their own (:mod:`autoenv.grading`): the agent's code never
    runs in the process whose exit status root turns into the verdict (see LOCK_VERDICT).
    ``unprivileged=False`` keeps pytest root, for tests that run no code of the agent's (documents parsed
    by LibreOffice, which needs a profile in a writable home). ``prepare``: shell lines run as root before the
    tests, once the verdict is locked (a legacy-tool level removes the tool there).
    """
    names = ("test_outputs.py", *support)
    files = " ".join(f"/tests/{f}" for f in names)
    if unprivileged:
        return (
            "#!/bin/bash\n"
            + LOCK_VERDICT
            + prepare
            + "# this task's test files only, run by the grader; the agent's code runs as nobody (tests/agentcall.py)\n"
            + GRADED_PYTEST.format(files=files, targets='"$T/test_outputs.py"')
            + "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
        )
    return (
        "#!/bin/bash\n"
        + LOCK_VERDICT
        + prepare
        + "# run only this task's test files, from a fresh folder\n"
        + "T=$(mktemp -d)\n"
        + f'cp {files} "$T"/ && chmod -R a+rX "$T" && cd "$T" && \\\n'
        + '  python3 -I -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest '
        + '"$T/test_outputs.py" -rA\n'
        + "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
    )


def solve_sh(body: str) -> str:
    return "#!/bin/bash\nset -euo pipefail\n" + body.rstrip() + "\n"


def function_from(path: Path, name: str) -> Callable[..., Any]:
    """The function ``name`` of a program a task ships (``path``), compiled on its own in a fresh scope (it may use
    only builtins): a generator that needs what the shipped program computes calls that very function rather than
    a copy of it that could drift. The rest of the file (its imports, its script) is never run."""
    source = path.read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    scope: dict[str, Any] = {}
    exec(compile(ast.Module([node], []), str(path), "exec"), scope)  # noqa: S102 - the family's own file
    return scope[name]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def slug(text: str, limit: int = 24) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:limit].strip("-") or "task"


def task_name(family: str, rng: random.Random, hint: str = "") -> str:
    tail = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(5))
    return f"{family}-{slug(hint, 16)}-{tail}" if hint else f"{family}-{tail}"


def seed_words(case: SeedCase) -> str:
    return " ".join([case.id, case.task, case.failure_mode, case.target_skill, case.trajectory]).lower()


def fmt_py(value: Any) -> str:
    """A Python literal that reads back to exactly ``value`` (used to embed expected results in tests)."""
    return repr(value)


# -- first-draft flaws --------------------------------------------------------------
#
# Each flaw is a change a hurried author makes. It is applied to a clean draft
# and recorded in ``clean`` so that, once validation feedback has named the
# failing part, the fixer can restore that file. The fixer never reads
# ``draft.flaw``: it only sees the feedback text (see autoenv.proposer.fixer).

FLAWS = (
    "forgot_copy",
    "answer_in_instruction",
    "wrong_output_path",
    "no_reward_on_failure",
    "tests_in_image",
    "stale_output",
)


def apply_flaw(draft: TaskDraft, flaw: str, rng: random.Random) -> TaskDraft:
    """A copy of ``draft`` with one realistic mistake (no-op if the flaw does not apply)."""
    files = dict(draft.files)
    clean: dict[str, str | bytes | None] = {}

    def change(rel: str, text: str | bytes | None) -> None:
        clean.setdefault(rel, files.get(rel))
        if text is None:
            files.pop(rel, None)
        else:
            files[rel] = text

    docker = files.get("environment/Dockerfile", "")
    if not all(
        isinstance(files.get(rel, ""), str)
        for rel in ("environment/Dockerfile", "instruction.md", "task.toml", "tests/test.sh", "solution/solve.sh")
    ):
        return draft
    if flaw == "forgot_copy":
        if "COPY app/" not in docker:
            return draft
        change(
            "environment/Dockerfile",
            "\n".join(line for line in docker.splitlines() if not line.startswith("COPY app/")) + "\n",
        )
    elif flaw == "answer_in_instruction":
        answer = draft.params.get("leak_hint")
        if not answer:
            return draft
        change(
            "instruction.md", files["instruction.md"].rstrip() + f"\n\nFor reference, a correct run gives {answer}.\n"
        )
    elif flaw == "wrong_output_path":
        out = draft.params.get("output_path")
        solve = files.get("solution/solve.sh", "")
        if not out or out not in solve:
            return draft
        stem, dot, ext = out.rpartition(".")
        change("solution/solve.sh", solve.replace(out, f"{stem}s.{ext}" if dot else out + "s"))
    elif flaw == "no_reward_on_failure":
        test_sh = files.get("tests/test.sh", "")
        if "test_outputs.py" not in test_sh:
            return draft
        body = (
            "#!/bin/bash\nset -e\nmkdir -p /logs/verifier\ncd /app\n"
            "python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py -rA\n"
            "echo 1 > /logs/verifier/reward.txt\n"
        )
        change("tests/test.sh", body)
    elif flaw == "tests_in_image":
        if "COPY app/" not in docker or "tests/test_outputs.py" not in files:
            return draft
        change("environment/app/test_outputs.py", files["tests/test_outputs.py"])
    elif flaw == "stale_output":
        stale = draft.params.get("stale_output")
        if not stale:
            return draft
        # only outputs that complete the answer: a partial one would pass validation unnoticed
        for rel, text in [stale] if isinstance(stale, tuple) else stale:
            change(f"environment/app/{rel}", text)
    else:
        raise ValueError(f"unknown flaw {flaw!r}")
    return TaskDraft(
        name=draft.name,
        family=draft.family,
        files=files,
        executable=set(draft.executable),
        params=dict(draft.params),
        flaw=flaw,
        clean=clean,
    )

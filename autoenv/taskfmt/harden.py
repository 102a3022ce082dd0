"""``autoenv task harden``: make someone else's task safe to train on without rewriting its tests by hand.

Public Python tasks (Terminal-Bench's shape) test the agent's package by importing it into pytest, so the agent's
code runs in the process whose exit status is the reward: ``os._exit(0)`` at import, or a few lines that rewrite
pytest's reports, win without doing the task (validation's ``tamper`` check rejects such tasks). Hardening keeps
the tests as they are and changes how they run:

* ``tests/test.sh`` runs pytest through the broker (``tests/agentcall.py grade``, :mod:`autoenv.grading`) as the
  grader (uid 65533) from a private copy of the tests, and writes the verdict as root after pytest ends;
* ``tests/agentimport.py`` (:mod:`autoenv.grading.agentimport`), loaded before collection, serves every module that
  resolves to a place the agent can write (the task's working folders) from a process of the agent's (nobody), and
  runs the agent's programs the tests start through ``run_agent``;
* the task's named inputs whose agent's copy the verifier would read (:mod:`autoenv.taskfmt.inputs`) are kept as the
  image ships them under ``tests/autoenv-inputs/`` and put back in place before the tests run, whatever the verifier
  (a task that needs only this, pytest or not, gets only this).

What the broker cannot serve is refused here, with the file and line (:class:`HardenError`), and nothing is written:
a test that replaces the agent's functions (``monkeypatch``, ``mock.patch``, assigning to a module's attribute),
passes its own callables into the agent's code, reads the agent's source, or starts the agent's programs in ways
``run_agent`` cannot stand in for (``Popen``, ``os.system``). A task whose verdict would silently weaken is never
written.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from autoenv.errors import TaskError
from autoenv.grading import AGENTCALL
from autoenv.taskfmt.inputs import MANIFEST, inputs_to_restore, write_restore
from autoenv.taskfmt.judge_code import CODE_RUNNERS, PROGRAM_STARTERS, called_name, dotted_name, imported_as
from autoenv.taskfmt.problems import Problem

HOOK_PATH = Path(__file__).parent.parent / "grading" / "agentimport.py"

#: Folders that are never "the agent's working folder", even where a task names them (serving them would serve
#: pytest or the standard library from the agent's process, or the tests themselves).
NOT_ROOTS = {"/", "/tests", "/logs", "/tmp", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys",
             "/dev", "/var", "/run", "/boot", "/usr/local", "/usr/lib", "/usr/local/lib", "/opt",
             "/solution"}  # fmt: skip

#: Starting a program in these ways cannot be served by ``run_agent`` (a live process, a shell of the grader's):
#: every starter the task check knows but ``subprocess.run``/``call``/``check_call``/``check_output``, which the
#: import hook serves.
UNSERVED_STARTERS = {**PROGRAM_STARTERS, "subprocess": {"Popen", "getoutput", "getstatusoutput"}}
#: Loading a file's code into the tests' process by path bypasses the import hook (an import by name does not).
IN_PROCESS_RUNNERS = {
    module: functions - {"import_module", "__import__"}
    for module, functions in CODE_RUNNERS.items()
    if module != "importlib"
}
INSPECTORS = {"getsource", "getsourcelines", "getsourcefile", "getfile", "getmodule", "findsource", "getcomments"}
PATCHERS = {"setattr", "delattr", "patch", "object", "multiple", "dict"}


class HardenError(TaskError, ValueError):
    """The task's tests use the agent's code in a way the broker cannot serve; each problem has file and line."""

    def __init__(self, task: Path, problems: list[Problem]):
        self.problems = problems
        lines = "\n".join(f"  {p.where}: {p.message}" for p in problems)
        super().__init__(
            f"{task}: cannot be hardened ({len(problems)} problem(s)); nothing was written:\n{lines}\n"
            "  -> rewrite these lines to call the agent's code with plain data (tests/agentcall.py: agent_module, "
            "run_agent), or leave the task out of the dataset"
        )


class Hardened(BaseModel):
    """What ``harden`` wrote: where, which folders count as the agent's, which test files run."""

    task: Path
    roots: list[str]
    tests: list[str]
    sys_path: list[str]
    #: the inputs its test.sh restores from the image's copy before the tests run
    inputs: list[str] = []


# -- what the task says about itself --------------------------------------------------------------------------


def _dockerfile(task: Path) -> str:
    path = task / "environment" / "Dockerfile"
    return path.read_text(errors="replace") if path.is_file() else ""


def _roots(task: Path, test_trees: list[ast.AST]) -> list[str]:
    """The folders the agent's code lives in: the task's artifacts, the image's working folder, and the absolute
    folders its tests put on ``sys.path``."""
    found: list[str] = []
    try:
        config = tomllib.loads((task / "task.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        config = {}
    for artifact in config.get("artifacts", []) or []:
        source = artifact if isinstance(artifact, str) else (artifact or {}).get("source")
        if isinstance(source, str):
            found.append(source)
    workdirs = re.findall(r"^\s*WORKDIR\s+(\S+)", _dockerfile(task), re.M | re.I)
    if workdirs:
        found.append(workdirs[-1])
    for tree in test_trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and dotted_name(node.func) in ("sys.path.insert", "sys.path.append"):
                found += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    roots = []
    for root in found:
        root = os.path.normpath(root)
        if root.startswith("/") and root not in NOT_ROOTS and root not in roots:
            roots.append(root)
    return roots


def _sys_path(task: Path, test_sh: str) -> list[str]:
    """Entries the original run had on ``sys.path`` besides the tests' folder: the image's PYTHONPATH, and the
    working folder of a ``python -m pytest`` (which puts it first)."""
    entries = []
    for value in re.findall(r"^\s*ENV\s+PYTHONPATH[=\s]\s*\"?([^\"\n]+)", _dockerfile(task), re.M):
        entries += [e for e in value.strip().split(":") if e.startswith("/")]
    cwd = None
    for line in test_sh.splitlines():
        if m := re.match(r"^\s*cd\s+(/\S*)", line):
            cwd = m.group(1)
        if re.search(r"python3?\s+(-\S+\s+)*-m\s+pytest", line) and cwd and cwd not in ("/tests",):
            entries.append(cwd)
    return list(dict.fromkeys(entries))


def _test_files(task: Path, test_sh: str) -> list[str]:
    """The test files the original verifier runs (named in its pytest command), else every ``test_*.py``."""
    tests = task / "tests"
    named = []
    for token in re.findall(r"[\w./-]+\.py\b", test_sh):
        rel = token.removeprefix("/tests/").lstrip("./") if token.startswith(("/tests/", "./")) else token
        if (tests / rel).is_file() and rel not in named and rel != "agentcall.py":
            named.append(rel)
    if named:
        return named
    return sorted(
        str(p.relative_to(tests))
        for p in tests.rglob("*.py")
        if p.name.startswith("test_") or p.name.endswith("_test.py")
    )


# -- what cannot be served ------------------------------------------------------------------------------------


def _agent_modules(task: Path, roots: list[str]) -> set[str]:
    """Top-level names of the agent's modules: those the image ships and those the instruction asks for."""
    env = task / "environment"
    names = {p.stem for p in env.rglob("*.py")} | {p.parent.name for p in env.rglob("__init__.py")}
    instruction = task / "instruction.md"
    text = instruction.read_text(errors="replace") if instruction.is_file() else ""
    for path in re.findall(r"(/[\w./-]+\.py)\b", text):
        if any(path.startswith(r.rstrip("/") + "/") for r in roots):
            names.add(PurePosixPath(path).stem)
    return names - set(sys.stdlib_module_names) - {"conftest", "setup", "test_outputs"}


def _bound_names(tree: ast.AST, modules: set[str]) -> set[str]:
    """Names a test file binds to the agent's modules or what they hold (imports, ``import_module``, fixtures that
    return one of them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in modules:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] in modules:
                names |= {alias.asname or alias.name for alias in node.names}
    for _ in range(3):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _refers(node.value, names, modules):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                returns = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
                if any(_refers(r, names, modules) for r in returns):
                    names.add(node.name)  # a fixture handing the tests an agent module
    return names


def _refers(node: ast.AST, names: set[str], modules: set[str]) -> bool:
    if isinstance(node, ast.Name) and node.id in names:
        return True
    if isinstance(node, ast.Attribute):
        return _refers(node.value, names, modules)
    if isinstance(node, ast.Call) and dotted_name(node.func) in (
        "importlib.import_module",
        "import_module",
        "__import__",
    ):
        first = node.args[0] if node.args else None
        return isinstance(first, ast.Constant) and str(first.value).split(".")[0] in modules
    return False


def _mentions_root(node: ast.AST, roots: list[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            if any(re.search(rf"(?<![\w.-]){re.escape(r)}(?![\w.-])", n.value) for r in roots):
                return True
    return False


def unserved_uses(tree: ast.AST, roots: list[str], modules: set[str]) -> list[tuple[int, str]]:
    """(line, what) for each use of the agent's code in a test file that the broker cannot serve faithfully."""
    names = _bound_names(tree, modules)
    local_callables = {
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    } - names
    imported = imported_as(tree)
    found = []

    def is_agents(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.split(".")[0] in modules
        return _refers(node, names, modules)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                base = target.value if isinstance(target, ast.Attribute) else None
                if isinstance(base, ast.Name) and base.id in names:
                    found.append((node.lineno, f"replaces {dotted_name(target)} of the agent's module in the tests"))
        if not isinstance(node, ast.Call):
            continue
        name = dotted_name(node.func)
        full = called_name(node, imported)
        module, _, function = full.rpartition(".")
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if function in PATCHERS and ("monkeypatch" in full or "mock" in full or "mocker" in full or full == "patch"):
            if arguments and is_agents(arguments[0]):
                found.append((node.lineno, f"{name}(...) patches the agent's code, which runs in another process"))
        elif module == "inspect" and function in INSPECTORS and any(is_agents(a) for a in arguments):
            found.append((node.lineno, f"{name}(...) reads the agent's source, which is not in the tests' process"))
        elif (
            function in ("open", "read_text", "read_bytes")
            and any(
                isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(".py")
                for a in [*arguments, node.func]
                for n in ast.walk(a)
            )
            and _mentions_root(node, roots)
        ):
            found.append((node.lineno, f"{name}(...) reads the agent's source"))
        elif function in UNSERVED_STARTERS.get(module or "builtins", ()) and any(
            _mentions_root(a, roots) for a in arguments
        ):
            found.append((node.lineno, f"{name}(...) starts the agent's program in a way run_agent cannot serve"))
        elif function in IN_PROCESS_RUNNERS.get(module or "builtins", ()) and any(
            _mentions_root(a, roots) or is_agents(a) for a in arguments
        ):
            found.append((node.lineno, f"{name}(...) loads the agent's code into the tests' process by path"))
        elif _refers(node.func, names, modules):
            for a in arguments:
                if isinstance(a, ast.Lambda) or (isinstance(a, ast.Name) and a.id in local_callables):
                    what = "a lambda" if isinstance(a, ast.Lambda) else f"the tests' own {a.id}"
                    found.append((node.lineno, f"passes {what} into the agent's code ({name}), which cannot call it"))
    return sorted(set(found))


# -- writing the hardened task --------------------------------------------------------------------------------

TEST_SH = """\
#!/bin/bash
# Hardened by `autoenv task harden`: the task's own tests, run by the grader (uid 65533) from a folder only it can
# read; every module they import from the agent's folders ({roots}) runs as nobody in a process the broker
# (tests/agentcall.py) starts, and so does every program of the agent's they start (tests/agentimport.py).
mkdir -p /logs/verifier
# only root writes the verdict: a reward.json the tests or the agent's code left would win over reward.txt
chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json
chown -R 65533:65533 /tests; chmod -R go-rwx /tests
T=$(mktemp -d)
cp -r /tests/. "$T"/ && chown -R 65533:65533 "$T" && chmod -R go-rwx "$T" && cd "$T" && \\
  python3 -I /tests/agentcall.py grade -- -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest \\
  -p agentimport{conftest} {targets} -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def where(path: Path, line: int | None, message: str) -> Problem:
    return Problem(path=str(path), line=line, message=message, rule="autoenv-harden")


def default_out(src: Path) -> Path:
    return src.parent / f"{src.name}-hardened"


def harden(src: Path, out: Path | None = None, *, broker: bool | None = None) -> Hardened:
    """Write a hardened copy of the task at ``src`` to ``out`` (default ``<src>-hardened``); raise
    :class:`HardenError` (nothing written) when its tests use the agent's code in a way the broker cannot serve.

    ``broker``: run the tests through the broker (default: when the verifier runs pytest, or when there is no input
    to restore, which then says why it cannot); the named inputs the verifier would read from the agent are
    restored either way."""
    src = Path(src).resolve()
    out = Path(out).resolve() if out else default_out(src)
    tests = src / "tests"
    test_sh_path = tests / "test.sh"
    if not (src / "task.toml").is_file() or not test_sh_path.is_file():
        raise TaskError(f"{src}: not a task with tests/test.sh (expected task.toml and tests/test.sh)")
    if out.exists():
        raise TaskError(f"{out}: already exists; remove it or pick another --out")
    test_sh = test_sh_path.read_text(errors="replace")
    restore = inputs_to_restore(src)
    if broker is None:
        broker = "pytest" in test_sh or not restore
    plan = _broker_plan(src, test_sh) if broker else None
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        target = staging / src.name
        shutil.copytree(src, target, ignore=shutil.ignore_patterns(".autoenv", "__pycache__", "*.pyc"))
        if plan is not None:
            _write_broker(target, plan)
        if restore:
            write_restore(target, restore)
        target.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if plan is None:
        return Hardened(task=out, roots=[], tests=[], sys_path=[], inputs=sorted(restore))
    return Hardened(
        task=out, roots=plan["roots"], tests=plan["files"], sys_path=plan["sys_path"], inputs=sorted(restore)
    )


def _broker_plan(src: Path, test_sh: str) -> dict:
    """What the broker needs to know of the task (roots, test files, sys.path), or :class:`HardenError`."""
    tests = src / "tests"
    test_sh_path = tests / "test.sh"
    if "pytest" not in test_sh:
        problem = where(test_sh_path, None, "the verifier does not run pytest; only pytest tests are hardened")
        raise HardenError(src, [problem])
    if "pytest" not in _dockerfile(src):
        raise HardenError(
            src,
            [where(src / "environment" / "Dockerfile", None,
                   "the image does not install pytest (the verifier must run it without a network): add "
                   "`RUN pip install pytest==...` to environment/Dockerfile")],
        )  # fmt: skip
    files = _test_files(src, test_sh)
    if not files:
        raise HardenError(src, [where(tests, None, "no test files found (test_*.py)")])
    py_files = sorted(p for p in tests.rglob("*.py") if p.name not in ("agentcall.py", "agentimport.py"))
    trees = {}
    problems = []
    for path in py_files:
        try:
            trees[path] = ast.parse(path.read_text(errors="replace"))
        except SyntaxError as exc:
            problems.append(where(path, exc.lineno, f"does not parse: {exc.msg}"))
    roots = _roots(src, list(trees.values()))
    if not roots:
        problems.append(where(src / "task.toml", None, "cannot tell where the agent's code lives: no artifacts, no "
                              "WORKDIR in environment/Dockerfile, no folder the tests put on sys.path"))  # fmt: skip
    modules = _agent_modules(src, roots)
    for path, tree in trees.items():
        problems += [where(path, line, what) for line, what in unserved_uses(tree, roots, modules)]
    if problems:
        raise HardenError(src, problems)
    return {"roots": roots, "files": files, "sys_path": _sys_path(src, test_sh), "conftest": (tests / "conftest.py")}


def _write_broker(target: Path, plan: dict) -> None:
    """The broker's files and the test.sh that runs the task's own tests through it, in the copy at ``target``."""
    (target / "tests" / "agentcall.py").write_text(AGENTCALL)
    (target / "tests" / "agentimport.py").write_text(HOOK_PATH.read_text())
    settings = {"roots": plan["roots"], "sys_path": plan["sys_path"]}
    (target / "tests" / "agentimport.json").write_text(json.dumps(settings, indent=2) + "\n")
    conftest = " -p conftest" if plan["conftest"].is_file() else ""
    targets = " ".join(f'"$T"/{shlex.quote(f)}' for f in plan["files"])
    script = TEST_SH.format(roots=", ".join(plan["roots"]), conftest=conftest, targets=targets)
    (target / "tests" / "test.sh").write_text(script)
    (target / "tests" / "test.sh").chmod(0o755)


# -- a dataset: harden what needs it, validate the rest as it is -------------------------------------------------


class HardenOutcome(BaseModel):
    """One task of ``validate --harden``: what is validated in its place, and why it was or was not hardened."""

    task: Path
    validated: Path
    hardened: bool
    reason: str = ""


def needs_broker(task: Path) -> bool:
    """The task's tests import the agent's code into pytest (``autoenv task check``'s finding), and it is not
    hardened already."""
    from autoenv.taskfmt.check import agent_code_in_judge

    if (task / "tests" / "agentimport.json").is_file():
        return False
    return any(p.rule == "autoenv-agent-code-in-judge" for p in agent_code_in_judge(task))


def needs_hardening(task: Path) -> bool:
    """The task needs the broker, or its verifier would read the agent's copy of a named input."""
    return needs_broker(task) or bool(inputs_to_restore(task))


def is_hardened(task: Path) -> bool:
    """A copy ``harden`` wrote (the broker's settings, or the list of restored inputs, beside its tests)."""
    return (task / "tests" / "agentimport.json").is_file() or (task / "tests" / MANIFEST).is_file()


def harden_tasks(tasks: list[Path], out_dir: Path) -> list[HardenOutcome]:
    """Harden each task that needs it into ``out_dir/<name>``; the others, and those whose tests cannot be served
    (the reason kept), are validated as they are. A copy hardened before from the same task is kept as it is (its
    recorded verdict with it), so an audit run again resumes."""
    from autoenv.taskfmt.hashing import task_hash

    outcomes = []
    for task in tasks:
        task = Path(task)
        if not needs_hardening(task):
            outcomes.append(HardenOutcome(task=task, validated=task, hardened=False, reason="nothing to harden"))
            continue
        target = Path(out_dir) / task.name
        fresh = target.with_name(f".{task.name}-new")
        shutil.rmtree(fresh, ignore_errors=True)
        try:
            harden(task, fresh, broker=needs_broker(task))
        except HardenError as exc:
            first = exc.problems[0]
            reason = f"{first.where}: {first.message}" + (
                f" (+{len(exc.problems) - 1} more)" if exc.problems[1:] else ""
            )
            outcomes.append(HardenOutcome(task=task, validated=task, hardened=False, reason=reason))
            continue
        if target.exists() and is_hardened(target) and task_hash(target) == task_hash(fresh):
            shutil.rmtree(fresh)
        else:
            if target.exists():
                if not is_hardened(target):
                    shutil.rmtree(fresh)
                    raise TaskError(f"{target}: exists and is not a hardened task; pick another --harden folder")
                shutil.rmtree(target)
            fresh.rename(target)
        outcomes.append(HardenOutcome(task=task, validated=target, hardened=True))
    return outcomes

"""Does a task's verifier run the agent's code where the agent could decide its own reward?

Test files that import the agent's modules into pytest (the process that writes the verdict), or start the agent's
programs as the grader or as root, let a submitted ``os._exit(0)`` or a rewritten pytest report pass the task. Read
from the test files' syntax trees (Python) and lines (shell), with file and line; the families call the agent's
code through ``tests/agentcall.py`` (:mod:`autoenv.grading`) instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from autoenv.taskfmt.problems import Level, Problem

IN_JUDGE_ADVICE = (
    "call the agent's code through tests/agentcall.py (agent_module(...), run_agent([...])): it runs in a process "
    "of its own as nobody; imported into pytest, a module that calls os._exit(0) or rewrites pytest's reports "
    "decides the reward (autoenv.grading; the families write this runner)"
)


#: A path under the agent's folder in a string: ``/app``, ``/app/x.py``, ``cd /app && ...`` (not ``/apps``).
APP_PATH = re.compile(r"(?<![\w.-])/app(?![\w.-])")

#: Calls that start a program: ``module.function`` (also when imported by name: ``from subprocess import run``).
PROGRAM_STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
           "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "posix_spawn",
           "posix_spawnp"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"spawn"},
}  # fmt: skip
#: Calls that run Python code of a file or module in the calling process.
CODE_RUNNERS = {
    "runpy": {"run_path", "run_module"},
    "importlib": {"import_module", "__import__"},
    "importlib.util": {"spec_from_file_location"},
    "importlib.machinery": {"SourceFileLoader"},
    "builtins": {"exec", "eval", "compile", "__import__"},
}


def dotted_name(node: ast.AST) -> str:
    """``a.b.c`` for a name or an attribute chain, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _app_names(tree: ast.AST) -> set[str]:
    """Names the test file binds to something that mentions /app (``SCRIPT = "/app/x.sh"``, ``APP = Path("/app")
    / "cli.py"``, ``CLI = SCRIPT``), anywhere in the file: a warning may over-approximate."""
    names: set[str] = set()
    for _ in range(4):  # chains of names: a few rounds reach a fixed point
        before = len(names)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and node.value is not None
                and _mentions_app(node.value, names)
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        if len(names) == before:
            break
    return names


def _mentions_app(node: ast.AST, app_names: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and APP_PATH.search(n.value):
            return True
        if isinstance(n, ast.Name) and n.id in app_names:
            return True
    return False


def imported_as(tree: ast.AST) -> dict[str, str]:
    """Local name -> ``module.function`` for ``from module import function [as name]`` and ``import a.b as c``
    (what :func:`called_name` reads a call's name through)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
    return names


def called_name(call: ast.Call, imported: dict[str, str]) -> str:
    """What a call calls, as its module's dotted name: ``sp.run`` after ``import subprocess as sp`` is
    ``subprocess.run``, ``run`` after ``from subprocess import run`` too; ``imported`` is :func:`imported_as`'s."""
    name = dotted_name(call.func)
    head, _, rest = name.partition(".")
    return f"{imported[head]}.{rest}" if head in imported and rest else imported.get(name, name)


def _in_process_uses(tree: ast.AST, agent_modules: set[str]) -> list[tuple[int, str]]:
    """(line, what) for each statement of a test file that puts the agent's code into its own process: a
    ``sys.path`` entry under /app, or an import of a module the task's environment ships. Code in strings (a
    child's program, run as another user) is not the test's own process and does not count."""
    found = []
    app_names = _app_names(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("insert", "append", "extend")
        ):
            if dotted_name(node.func.value) == "sys.path" and any(_mentions_app(a, app_names) for a in node.args):
                found.append((node.lineno, f"sys.path.{node.func.attr}(... '/app' ...)"))
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            on_path = any(dotted_name(t.value if isinstance(t, ast.Subscript) else t) == "sys.path" for t in targets)
            if on_path and _mentions_app(node.value, app_names):
                found.append((node.lineno, "sys.path = ... '/app' ..."))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            for name in names:
                if name.split(".")[0] in agent_modules:
                    found.append((node.lineno, f"import {name}"))
    return sorted(found)


#: Programs that start another as a given user: ``setpriv --reuid=65534 ... /app/x``.
USER_SWITCHERS = {"setpriv", "runuser", "su", "sudo", "chroot"}


def _as_another_user(call: ast.Call) -> bool:
    """The call drops to another user itself: ``user=65534`` (not root), or a command that starts with
    ``setpriv``/``runuser``/``su``: then the tests' own user (the grader, or root) does not run the program."""
    for keyword in call.keywords:
        if keyword.arg == "user":
            return not (isinstance(keyword.value, ast.Constant) and keyword.value.value in (0, "root", None))
    first = call.args[0] if call.args else None
    if isinstance(first, ast.List | ast.Tuple) and first.elts:
        first = first.elts[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.split():
        return first.value.split()[0].rsplit("/", 1)[-1] in USER_SWITCHERS
    return False


def _programs_started(tree: ast.AST, agent_modules: set[str]) -> list[tuple[int, str]]:
    """(line, what) for each call in a test file that starts a program of /app's (``subprocess``, ``os.system``,
    ``os.exec*``...: as the tests' own user, the grader, which can read the tests) or runs a file or module of the
    agent's in the tests' process (``runpy``, ``importlib``, ``exec``) other than through ``tests/agentcall.py``.
    A call counts when its arguments (``cwd=`` too) mention /app, directly or through a name bound to it, and it
    does not drop to another user itself (``user=65534``, ``setpriv ...``: the reviewed root grader that runs
    the agent's function as nobody keeps the agent's code off its uid)."""
    app_names = _app_names(tree)
    imported = imported_as(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = called_name(node, imported)
        module, _, function = name.rpartition(".")
        module = module or "builtins"
        arguments = [*node.args, *(k.value for k in node.keywords)]
        mentions_app = any(_mentions_app(a, app_names) for a in arguments)
        names_module = any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.split(".")[0] in agent_modules
            for a in node.args[:1]
        )
        if function in PROGRAM_STARTERS.get(module, ()) and mentions_app and not _as_another_user(node):
            found.append((node.lineno, f"{name}(...) starts a program of /app's as the tests' own user"))
        elif function in CODE_RUNNERS.get(module, ()) and (mentions_app or names_module):
            found.append((node.lineno, f"{name}(...) runs the agent's code in the tests' process"))
    return sorted(set(found))


#: A test.sh command that runs a program under /app: ``/app/x.sh ...``, ``python3 /app/x.py`` (at the start of a
#: command: after ``;``, ``&&``, ``|``, ``$(``, ``then``, ``do``, or ``timeout N``).
SHELL_RUNS_APP = re.compile(
    r"(?:^|[;&|(`]|\$\(|\bthen\b|\bdo\b|\btimeout\s+\S+)\s*"
    r"(?:(?:python3?|bash|sh|node|perl|ruby|Rscript)\s+(?:-\S+\s+)*)?(/app/[\w./-]+)"
)
#: ... unless the line drops to another user (or hands the program to the broker).
SHELL_SWITCHES_USER = re.compile(r"\b(?:setpriv|runuser|su|sudo|agentcall\.py)\b")


def _shell_programs_started(text: str) -> list[tuple[int, str]]:
    """(line, program) for each test.sh line that runs a program under /app as root, the verdict's writer."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = "" if line.lstrip().startswith("#") else line
        if (m := SHELL_RUNS_APP.search(code)) and not SHELL_SWITCHES_USER.search(code):
            found.append((number, m.group(1)))
    return found


PROGRAM_ADVICE = (
    "start the agent's programs with tests/agentcall.py's run_agent([...]) (as nobody, in a process group of its "
    "own, its output returned as data) and put the inputs it reads in agent_folder(...): run by the tests' own "
    "user, the program can read the test files and the expected values next to them"
)


SHELL_PROGRAM_ADVICE = (
    "run it as nobody (`setpriv --reuid=65534 --regid=65534 --clear-groups /app/...`), or from the Python tests "
    "with tests/agentcall.py's run_agent([...]): as root, the agent's program can read the tests and write the reward"
)


def agent_code_in_judge(path: Path) -> list[Problem]:
    """Test files that import the agent's code into the process that decides the reward, or start the agent's
    programs as the grader (Python tests) or as root (``tests/*.sh``), with file and line."""
    env_dir, tests_dir = path / "environment", path / "tests"
    agent_modules = {p.stem for p in env_dir.rglob("*.py")} | {p.parent.name for p in env_dir.rglob("__init__.py")}
    found: list[tuple[Path, int, str, str, str]] = []  # file, line, rule, message, advice
    for test in sorted(tests_dir.rglob("*.py")) if tests_dir.is_dir() else []:
        if test.name == "agentcall.py":
            continue
        try:
            tree = ast.parse(test.read_text(errors="replace"))
        except (SyntaxError, ValueError):
            continue  # pytest reports a file it cannot read; this check has nothing to add
        for line, what in _in_process_uses(tree, agent_modules)[:1]:
            message = f"the tests run the agent's code inside pytest ({what})"
            found.append((test, line, "autoenv-agent-code-in-judge", message, IN_JUDGE_ADVICE))
        for line, what in _programs_started(tree, agent_modules)[:5]:
            message = f"the tests run the agent's code outside the broker ({what})"
            found.append((test, line, "autoenv-agent-program-in-judge", message, PROGRAM_ADVICE))
    for script in sorted(tests_dir.rglob("*.sh")) if tests_dir.is_dir() else []:
        for line, program in _shell_programs_started(script.read_text(errors="replace"))[:5]:
            message = f"the verifier runs {program} as root, the user that writes the verdict"
            found.append((script, line, "autoenv-agent-program-in-judge", message, SHELL_PROGRAM_ADVICE))
    return [
        Problem(path=str(file), line=line, rule=rule, message=message, advice=advice, level=Level.WARNING)
        for file, line, rule, message, advice in found
    ]

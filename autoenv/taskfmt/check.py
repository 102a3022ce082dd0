"""Static checks of a Harbor task: Harbor's own lint plus what a careful reviewer sees at once.

Harbor's lint judges a task as a *benchmark* item. autoenv also needs every
task to be runnable by its validator (a verifier script that writes a reward,
an instruction, an environment, a reference solution unless validation runs
without one) and free of flaws no behavioural check sees: merge-conflict
markers and committed secrets.

Every finding has a level (:class:`Level`): an *error* makes the task unfit to
train on; a *warning* is worth fixing but changes no behaviour (style, unpinned
versions, unknown metadata fields); a *note* is a limit of how the task is run
(a shared-mode verifier), not a flaw of the task. Only errors fail a check;
``strict`` callers count warnings too.
"""

from __future__ import annotations

import ast
import re
from enum import StrEnum
from pathlib import Path

from harbor.lint import lint_task
from harbor.lint.models import DEFAULT_RULES, LintRule
from harbor.models.task.config import NetworkMode
from harbor.models.task.task import Task
from pydantic import BaseModel

from autoenv.sandbox.local.image import base_images


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


#: Harbor's lint rules, all of them: the ones about style become warnings, the shared-verifier one a note.
RULES = set(DEFAULT_RULES) | {LintRule.SHARED_VERIFIER}

#: Lint rules that do not change what the task does (anything not listed is an error).
RULE_LEVELS: dict[str, Level] = {
    LintRule.UNKNOWN_CONFIG_FIELD: Level.WARNING,
    LintRule.UNPINNED_IMAGE: Level.WARNING,
    LintRule.UNPINNED_PYTHON_DEPENDENCY: Level.WARNING,
    LintRule.ROOT_AGENT: Level.WARNING,
    LintRule.OVERLAPPING_ARTIFACTS: Level.WARNING,
    LintRule.ARTIFACT_LOG_OVERLAP: Level.WARNING,
    LintRule.SHARED_VERIFIER: Level.NOTE,
    # errors only when the task declares no network (then grading cannot work); see _lint_level
    LintRule.VERIFIER_RUNTIME_INSTALL: Level.WARNING,
    LintRule.VERIFIER_NETWORK_DOWNLOAD: Level.WARNING,
}
NETWORK_RULES = {LintRule.VERIFIER_RUNTIME_INSTALL, LintRule.VERIFIER_NETWORK_DOWNLOAD}

#: Verifier lines that fetch something at grading time (Harbor's own rules see these in separate mode only).
GRADING_DOWNLOAD = re.compile(
    r"^\s*(?!#).*?\b(?:pip3?\s+install|python3?\s+-m\s+pip\s+install|uv\s+(?:pip\s+install|add|tool\s+install)|uvx\s"
    r"|apt(?:-get)?\s+(?:-\S+\s+)*install|npm\s+(?:install|i)\b|npx\s|curl\s[^\n]*https?://|wget\s[^\n]*https?://"
    r"|git\s+clone\s)",
    re.M,
)
REWARD_FILE = re.compile(r"/logs/verifier/reward\.(txt|json)")
SET_E = re.compile(r"^\s*set\s+-[a-zA-Z]*e|^#!\S*\s+-[a-zA-Z]*e", re.M)
CONFLICT = re.compile(r"^(<{7}|>{7})(?: |$)|^={7}$", re.M)
MAX_SCAN_BYTES = 1024 * 1024

#: Credentials that must never be committed to a task (the agent, and everyone the dataset is shared
#: with, can read them). Shapes of the issuers' own formats, so random data files do not match
#: (an entropy detector such as detect-secrets flags the random inputs tasks ship).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "OpenAI/Anthropic API key": re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    "GitHub token": re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{40,}"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
}
#: ``NAME=value`` in a .env file where NAME says it is a credential and the value is not a placeholder.
ENV_SECRET = re.compile(
    r"^\s*(?:export\s+)?([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*)\s*=\s*['\"]?([^'\"\s#]{8,})", re.M
)
PLACEHOLDER = re.compile(r"^(?:\$\{?|<|x{4,}|\*{4,}|changeme|your[-_]|example|dummy|test|placeholder|replace)", re.I)


class Problem(BaseModel):
    """One finding about a task: where, what, how bad, and what to do."""

    path: str
    message: str
    rule: str
    line: int | None = None
    level: Level = Level.ERROR
    advice: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def __str__(self) -> str:
        text = f"{self.where}: {self.level}: {self.message} [{self.rule}]"
        return f"{text}\n  -> {self.advice}" if self.advice else text


def errors(problems: list[Problem], *, strict: bool = False) -> list[Problem]:
    """The problems that make a task invalid: errors, and warnings too when ``strict``."""
    counted = {Level.ERROR, Level.WARNING} if strict else {Level.ERROR}
    return [p for p in problems if p.level in counted]


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file()


def grades_apart(task: Path) -> bool:
    """The task's verifier runs in a fresh sandbox (``[verifier] environment_mode = "separate"``, or a verifier
    environment of its own), not where the agent was root; a task.toml that does not parse does not."""
    import tomllib

    try:
        verifier = tomllib.loads((task / "task.toml").read_text()).get("verifier", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return verifier.get("environment_mode") == "separate" or "environment" in verifier


def find_tasks(path: Path) -> list[Path]:
    """A task directory, or every task directly below a dataset directory."""
    if is_task_dir(path):
        return [path]
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_dir() and is_task_dir(p))
    return []


OFFLINE_DOWNLOAD_ADVICE = (
    'the task declares network_mode = "no-network", so this download fails at grading time: '
    "install what the verifier needs in environment/Dockerfile (or in the verifier's own image)"
)


def _lint(path: Path) -> list[Problem]:
    """Harbor's lint, each finding at its level (grading downloads are raised to errors in check_task when offline)."""
    problems = []
    for f in lint_task(path, selected_rules=RULES):
        advice = ""
        if f.rule in NETWORK_RULES:
            advice = (
                "grading depends on a registry being up; installing it in environment/Dockerfile makes the verdict "
                "repeatable"
            )
        elif f.rule == LintRule.SHARED_VERIFIER:
            advice = (
                "a shared-mode verifier runs where the agent ran, so its reward is only as safe as that sandbox; "
                '[verifier] environment_mode = "separate" grades in a fresh one'
            )
        problems.append(
            Problem(
                path=f.path,
                message=f.message,
                rule=str(f.rule),
                line=f.line,
                level=RULE_LEVELS.get(f.rule, Level.ERROR),
                advice=advice,
            )
        )
    return problems


def _text_files(path: Path):
    for file in sorted(path.rglob("*")):
        if not file.is_file() or file.is_symlink() or ".autoenv" in file.relative_to(path).parts:
            continue
        try:
            if file.stat().st_size > MAX_SCAN_BYTES:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        yield file, data.decode("utf-8", errors="replace")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


CONFLICT_ADVICE = "resolve the conflict: keep one side, delete the <<<<<<< / ======= / >>>>>>> lines"
SECRET_ADVICE = "remove it and revoke it; a task that needs a credential must take it from the environment at run time"
ENV_ADVICE = "remove the value (and revoke it if it was real); leave a placeholder or read it from the environment"


def _finding(rel: str, text: str, match: re.Match, rule: str, message: str, advice: str) -> Problem:
    return Problem(path=rel, line=_line_of(text, match.start()), rule=rule, message=message, advice=advice)


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


def _dotted(node: ast.AST) -> str:
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


def _imported_as(tree: ast.AST) -> dict[str, str]:
    """Local name -> ``module.function`` for ``from module import function [as name]`` and ``import a.b as c``."""
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
            if _dotted(node.func.value) == "sys.path" and any(_mentions_app(a, app_names) for a in node.args):
                found.append((node.lineno, f"sys.path.{node.func.attr}(... '/app' ...)"))
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            on_path = any(_dotted(t.value if isinstance(t, ast.Subscript) else t) == "sys.path" for t in targets)
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
    imported = _imported_as(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, rest = name.partition(".")
        name = f"{imported[head]}.{rest}" if head in imported and rest else imported.get(name, name)
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
    problems = []
    for test in sorted(tests_dir.rglob("*.py")) if tests_dir.is_dir() else []:
        if test.name == "agentcall.py":
            continue
        try:
            tree = ast.parse(test.read_text(errors="replace"))
        except (SyntaxError, ValueError):
            continue  # pytest reports a file it cannot read; this check has nothing to add
        for line, what in _in_process_uses(tree, agent_modules)[:1]:
            problems.append(
                Problem(
                    path=str(test),
                    line=line,
                    rule="autoenv-agent-code-in-judge",
                    message=f"the tests run the agent's code inside pytest ({what})",
                    advice=IN_JUDGE_ADVICE,
                    level=Level.WARNING,
                )
            )
        for line, what in _programs_started(tree, agent_modules)[:5]:
            problems.append(
                Problem(
                    path=str(test),
                    line=line,
                    rule="autoenv-agent-program-in-judge",
                    message=f"the tests run the agent's code outside the broker ({what})",
                    advice=PROGRAM_ADVICE,
                    level=Level.WARNING,
                )
            )
    for script in sorted(tests_dir.rglob("*.sh")) if tests_dir.is_dir() else []:
        for line, program in _shell_programs_started(script.read_text(errors="replace"))[:5]:
            problems.append(
                Problem(
                    path=str(script),
                    line=line,
                    rule="autoenv-agent-program-in-judge",
                    message=f"the verifier runs {program} as root, the user that writes the verdict",
                    advice=SHELL_PROGRAM_ADVICE,
                    level=Level.WARNING,
                )
            )
    return problems


def hygiene(path: Path) -> list[Problem]:
    """Merge-conflict markers and committed credentials in any of the task's files."""
    problems = []
    for file, text in _text_files(path):
        rel = str(file)
        markers = list(CONFLICT.finditer(text))
        if any(m.group(0).startswith("<<<<<<<") for m in markers):
            first = markers[0].group(0)[:8]
            what = f"merge-conflict markers ({len(markers)} lines like {first!r}): the file is half-merged"
            problems.append(_finding(rel, text, markers[0], "autoenv-conflict-marker", what, CONFLICT_ADVICE))
        for kind, pattern in SECRET_PATTERNS.items():
            if m := pattern.search(text):
                what = f"a {kind} is committed to the task ({m.group(0)[:12]}...)"
                problems.append(_finding(rel, text, m, "autoenv-secret", what, SECRET_ADVICE))
        if file.name == ".env" or file.name.startswith(".env."):
            for m in ENV_SECRET.finditer(text):
                if not PLACEHOLDER.match(m.group(2)):
                    what = f"{m.group(1)} holds a value in a committed .env file"
                    problems.append(_finding(rel, text, m, "autoenv-secret", what, ENV_ADVICE))
    return problems


OFFLINE_DOWNLOAD_ADVICE = "install what the verifier needs in environment/Dockerfile; grading has no network"
DOWNLOAD_ADVICE = (
    "grading then depends on a registry being up; installing it in environment/Dockerfile makes the verdict repeatable"
)


def _grading_downloads(test_sh: Path, offline: bool, already: set[int]) -> list[Problem]:
    """Verifier lines that need a registry or the internet while grading."""
    text = test_sh.read_text(errors="replace")
    found = []
    for m in GRADING_DOWNLOAD.finditer(text):
        line = _line_of(text, m.start())
        if line in already:
            continue
        command = text.splitlines()[line - 1].strip()[:120]
        what = f"fetches from the network while grading (`{command}`)"
        if offline:
            level, advice = Level.ERROR, OFFLINE_DOWNLOAD_ADVICE
            what += ', but the task declares network_mode = "no-network"'
        else:
            level, advice = Level.WARNING, DOWNLOAD_ADVICE
        found.append(
            Problem(
                path=str(test_sh), line=line, rule="autoenv-grading-network", level=level, message=what, advice=advice
            )
        )
    return found


#: Lines that cannot fail a ``set -e`` script before it writes a reward.
HARMLESS = re.compile(r"^\s*(?:#.*|mkdir\b.*|cd\b.*|echo\b.*|printf\b.*|export\b.*|set\b.*|[A-Za-z_]\w*=\S*|)$")


def _set_e_without_reward(test_sh: Path) -> Problem | None:
    """A test.sh under ``set -e`` that runs commands before it first writes a reward: if one fails, no reward."""
    text = test_sh.read_text(errors="replace")
    m = SET_E.search(text)
    if not m or "trap" in text:
        return None
    lines = text[m.end() :].splitlines()[1:]
    risky = None
    for line in lines:
        if REWARD_FILE.search(line):
            break
        if not HARMLESS.match(line):
            risky = line.strip()
            break
    if risky is None:
        return None
    return Problem(
        path=str(test_sh),
        line=_line_of(text, m.start()),
        rule="autoenv-reward-on-failure",
        level=Level.WARNING,
        message=f"runs under `set -e` and `{risky[:80]}` comes before any reward is written: when it fails, the script "
        "exits without a reward (an error, not reward 0)",
        advice="write 0 first (`echo 0 > /logs/verifier/reward.txt`), drop `set -e`, or use "
        "`if pytest ...; then echo 1; else echo 0; fi > /logs/verifier/reward.txt`",
    )


def check_task(path: Path, *, env: str = "local", oracle: bool = True) -> list[Problem]:
    """All findings about one task directory, each with its level; no errors means well formed.

    ``oracle=False`` (validation of a dataset without reference solutions): a missing
    ``solution/`` is a note, not an error.
    """
    path = Path(path)
    if not path.exists():
        return [Problem(path=str(path), message="no such file or directory", rule="invalid-task-files")]
    if not path.is_dir():
        return [
            Problem(
                path=str(path),
                message="not a task directory (expected a folder with task.toml)",
                rule="invalid-task-files",
            )
        ]
    problems = _lint(path)
    if any(p.rule in ("invalid-task-config", "invalid-task-files") and p.path.endswith("task.toml") for p in problems):
        return problems
    try:
        task = Task(path)
    except Exception as exc:  # noqa: BLE001 - Harbor's loader is the judge of the format
        problems.append(
            Problem(
                path=str(path / "task.toml"), message=f"Harbor cannot load the task: {exc}", rule="invalid-task-config"
            )
        )
        return problems
    offline = task.config.environment.network_mode == NetworkMode.NO_NETWORK
    if offline:  # Harbor's grading-download rules: the verdict can never be 1 without a network
        for p in problems:
            if p.rule in NETWORK_RULES:
                p.level, p.advice = Level.ERROR, OFFLINE_DOWNLOAD_ADVICE
    problems += hygiene(path)
    problems += agent_code_in_judge(path)

    instruction = path / "instruction.md"
    if not instruction.is_file() or not instruction.read_text().strip():
        problems.append(
            Problem(path=str(instruction), message="instruction is missing or empty", rule="autoenv-instruction")
        )
    if task.config.steps:
        return problems  # multi-step tasks keep solutions and tests per step
    solve = task.paths.solve_path
    if not solve.is_file():
        if oracle:
            problems.append(
                Problem(
                    path=str(solve),
                    message="reference solution missing; validation runs it as the oracle",
                    rule="autoenv-solution",
                    advice="add solution/solve.sh, or validate without it (autoenv validate --no-oracle)",
                )
            )
        else:
            problems.append(
                Problem(
                    path=str(solve),
                    message="no reference solution: the oracle, determinism, partial-solution and "
                    "timing checks are not run",
                    rule="autoenv-solution",
                    level=Level.NOTE,
                )
            )
    test_sh = task.paths.test_path
    if not test_sh.is_file():
        problems.append(Problem(path=str(test_sh), message="verifier script missing", rule="autoenv-tests"))
    else:
        tests_text = "\n".join(
            p.read_text(errors="replace")
            for p in (path / "tests").rglob("*")
            if p.is_file() and p.suffix in {".sh", ".py", ""}
        )
        if not REWARD_FILE.search(tests_text):
            problems.append(
                Problem(
                    path=str(test_sh),
                    message="never writes /logs/verifier/reward.txt or reward.json",
                    rule="autoenv-tests",
                )
            )
        elif (set_e := _set_e_without_reward(test_sh)) is not None:
            problems.append(set_e)
        harbor_lines = {
            p.line for p in problems if p.rule in NETWORK_RULES and p.line and Path(p.path).name == test_sh.name
        }
        problems += _grading_downloads(test_sh, offline, harbor_lines)
    dockerfile = path / "environment" / "Dockerfile"
    if dockerfile.is_file():
        if not base_images(dockerfile.read_text(errors="replace")):
            problems.append(
                Problem(
                    path=str(dockerfile), message="no FROM instruction naming a base image", rule="autoenv-environment"
                )
            )
    elif not task.config.environment.docker_image:
        problems.append(
            Problem(
                path=str(dockerfile),
                message="no Dockerfile and no environment.docker_image",
                rule="autoenv-environment",
            )
        )
    return problems

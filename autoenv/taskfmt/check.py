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

import re
from pathlib import Path

from harbor.lint import lint_task
from harbor.lint.models import DEFAULT_RULES, LintRule
from harbor.models.task.config import NetworkMode
from harbor.models.task.task import Task

from autoenv.sandbox.dockerfile import base_images
from autoenv.taskfmt.judge_code import agent_code_in_judge
from autoenv.taskfmt.problems import Level, Problem, errors  # noqa: F401 - errors: the stages name it here

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

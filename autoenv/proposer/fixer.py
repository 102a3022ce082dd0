"""The scripted proposer's repair step: read the validator's feedback, edit the task.

This is what makes the ``feedback`` and ``agentic`` methods more than
retries. The fixer never learns which flaw a draft carries; it sees only the
feedback text (sections ``[check] message``, as
``ValidationReport.feedback()`` writes them) and the task's files, diagnoses
what the message points at, and edits the files a task author would edit.
When nothing in the feedback matches a repair it knows, it says so and the
attempt ends with the validator's reason.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from autoenv.families.base import ARTIFACTS_TOML, pytest_test_sh
from autoenv.grading import AGENTCALL

SECTION = re.compile(r"^\[(structure|build|oracle|deterministic|nop|leakage|tamper|partial|timeouts)\] ", re.M)
APP_PATH = re.compile(r"(/app/[\w./-]+\w)")


@dataclass
class Repair:
    """One edit: which check it answers, what was changed, in which file."""

    check: str
    file: str
    change: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.file}: {self.change}"


def sections(feedback: str) -> dict[str, str]:
    """Failed checks named in a feedback text -> their message."""
    out: dict[str, str] = {}
    marks = list(SECTION.finditer(feedback))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(feedback)
        out[m.group(1)] = feedback[m.end() : end]
    return out


def repair(task_dir: Path | str, feedback: str) -> list[Repair]:
    """Apply every repair the feedback calls for; an empty list means the fixer is out of ideas."""
    task = Path(task_dir)
    found = sections(feedback)
    repairs: list[Repair] = []
    for check, message in found.items():
        handler = _HANDLERS.get(check)
        if handler is not None:
            repairs += handler(task, message)
    return repairs


# -- helpers ---------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return ""


def _workdir(task: Path) -> str:
    m = re.search(r"^WORKDIR\s+(\S+)", _read(task / "environment" / "Dockerfile"), re.M)
    return m.group(1).rstrip("/") if m else "/app"


def _env_file(task: Path, image_path: str) -> Path | None:
    """The build-context file that ends up at ``image_path`` (via ``COPY app/ <workdir>/``)."""
    workdir = _workdir(task)
    if not image_path.startswith(workdir + "/"):
        return None
    candidate = task / "environment" / "app" / image_path[len(workdir) + 1 :]
    return candidate if candidate.exists() else None


# -- one handler per failed check --------------------------------------------------------


def _fix_oracle(task: Path, message: str) -> list[Repair]:
    repairs: list[Repair] = []
    docker_path = task / "environment" / "Dockerfile"
    docker = _read(docker_path)
    missing_input = re.search(r"No such file or directory|FileNotFoundError|can't open file|cannot open", message)
    if (
        missing_input
        and (task / "environment" / "app").is_dir()
        and not re.search(r"^(COPY|ADD)\s+app/?\s", docker, re.M)
    ):
        workdir = _workdir(task)
        lines = docker.rstrip("\n").splitlines()
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("WORKDIR")), len(lines))
        lines.insert(at, f"COPY app/ {workdir}/")
        docker_path.write_text("\n".join(lines) + "\n")
        repairs.append(
            Repair(
                "oracle",
                "environment/Dockerfile",
                f"the input files were never copied into the image: added COPY app/ {workdir}/",
            )
        )
    solve_path = task / "solution" / "solve.sh"
    solve = _read(solve_path)
    instruction = _read(task / "instruction.md")
    wanted = [p for p in APP_PATH.findall(message) if p not in solve]
    if wanted and solve:
        strays = sorted({p for p in APP_PATH.findall(solve) if p not in instruction and _env_file(task, p) is None})
        for target in dict.fromkeys(wanted):
            best = max(strays, key=lambda p: difflib.SequenceMatcher(None, p, target).ratio(), default=None)
            if best and difflib.SequenceMatcher(None, best, target).ratio() >= 0.85:
                solve = solve.replace(best, target)
                strays.remove(best)
                repairs.append(
                    Repair(
                        "oracle",
                        "solution/solve.sh",
                        f"the solution wrote {best}, the tests read {target}: fixed the path",
                    )
                )
        solve_path.write_text(solve)
    return repairs


def _fix_nop(task: Path, message: str) -> list[Repair]:
    repairs: list[Repair] = []
    test_sh = task / "tests" / "test.sh"
    if "instead of writing reward 0" in message or "reward_missing" in message:
        text = _read(test_sh)
        if (task / "tests" / "test_outputs.py").is_file():
            support = sorted(
                p.name
                for p in (task / "tests").iterdir()
                if p.is_file() and p.name not in ("test.sh", "test_outputs.py", "agentcall.py")
            )
            test_sh.write_text(pytest_test_sh(*support))
            (task / "tests" / "agentcall.py").write_text(AGENTCALL)
            repairs.append(
                Repair(
                    "nop",
                    "tests/test.sh",
                    "rewrote it to record reward 0 when pytest fails (it stopped before writing a reward)",
                )
            )
        elif re.search(r"^set -e", text, re.M):
            test_sh.write_text(re.sub(r"^set -e\w*\n", "", text, flags=re.M))
            repairs.append(
                Repair("nop", "tests/test.sh", "removed set -e so a failing check still reaches the reward line")
            )
    if re.search(r"(does|doing) nothing gets reward", message):
        # the expected output is already in the image: outputs the instruction asks for that ship with the environment
        instruction = _read(task / "instruction.md")
        for m in re.finditer(r"\b(?:[Ww]rite|[Ss]ave|[Pp]roduce|[Cc]reate)\b[^.`]{0,80}`(/app/[^`\s]+)`", instruction):
            env_file = _env_file(task, m.group(1))
            if env_file is not None and env_file.is_file():
                env_file.unlink()
                repairs.append(
                    Repair(
                        "nop",
                        env_file.relative_to(task).as_posix(),
                        f"the output {m.group(1)} shipped with the environment: removed it",
                    )
                )
    return repairs


def _fix_leakage(task: Path, message: str) -> list[Repair]:
    repairs: list[Repair] = []
    instruction_path = task / "instruction.md"
    instruction = _read(instruction_path)
    literals = re.findall(r"the tests expect '(.+?)' and the instruction states it", message)
    rows = re.findall(r"expected-output row '(.+?)' is in the instruction", message)
    if literals or rows:
        paragraphs = instruction.split("\n\n")
        kept = [p for p in paragraphs if not any(v in p for v in literals + rows)]
        if len(kept) < len(paragraphs):
            instruction_path.write_text("\n\n".join(kept).rstrip() + "\n")
            repairs.append(
                Repair(
                    "leakage",
                    "instruction.md",
                    f"removed {len(paragraphs) - len(kept)} paragraph(s) stating expected results",
                )
            )
    for kind, where in re.findall(r"- (\w+_in_image): (\S+) <-", message):
        env_file = _env_file(task, where)
        if env_file is not None and env_file.is_file():
            env_file.unlink()
            repairs.append(
                Repair(
                    "leakage", env_file.relative_to(task).as_posix(), f"{kind}: removed the file from the environment"
                )
            )
    return repairs


def _fix_tamper(task: Path, message: str) -> list[Repair]:
    """Grade in a fresh sandbox: Harbor's separate verifier mode with /app collected from the agent's."""
    toml_path = task / "task.toml"
    text = _read(toml_path)
    if re.search(r'^environment_mode\s*=\s*"separate"', text, re.M):
        return []
    if not re.search(r"^artifacts\s*=", text, re.M):
        first, sep, rest = text.partition("\n")
        text = f"{first}\n{ARTIFACTS_TOML}{rest}" if first.startswith("schema_version") else ARTIFACTS_TOML + text
    if re.search(r"^\[verifier\]\s*$", text, re.M):
        text = re.sub(r"^\[verifier\]\s*$", '[verifier]\nenvironment_mode = "separate"', text, count=1, flags=re.M)
    else:
        text = text.rstrip("\n") + '\n\n[verifier]\nenvironment_mode = "separate"\n'
    toml_path.write_text(text)
    return [
        Repair(
            "tamper",
            "task.toml",
            "the verifier runs in a fresh sandbox (separate verifier mode, /app collected), "
            "where nothing the agent left running or planted can touch the reward",
        )
    ]


def _fix_timeouts(task: Path, message: str) -> list[Repair]:
    toml_path = task / "task.toml"
    text = _read(toml_path)
    changed = text
    for section, floor in (("agent", 120.0), ("verifier", 60.0)):
        m = re.search(rf"(\[{section}\][^\[]*?timeout_sec = )([0-9.]+)", changed)
        if m and float(m.group(2)) < floor * 4:
            changed = changed[: m.start(2)] + f"{max(floor, float(m.group(2)) * 4):.1f}" + changed[m.end(2) :]
    if changed != text:
        toml_path.write_text(changed)
        return [Repair("timeouts", "task.toml", "raised the agent/verifier time limits")]
    return []


_HANDLERS = {
    "oracle": _fix_oracle,
    "nop": _fix_nop,
    "leakage": _fix_leakage,
    "tamper": _fix_tamper,
    "timeouts": _fix_timeouts,
}

"""A served model as the task author for the ``prompt`` and ``feedback`` methods.

The model gets one brief (format spec, skills, lessons, the seed case) and
answers with ``write_file`` tool calls, one per file of the task, in a single
reply: that reply *is* the prompt method. The feedback method continues the
same conversation: every file call is answered, and the validator's feedback
comes back with the answers, asking for rewritten files. The client is the
terminal agent's OpenAI policy, so retries, the text-format fallback for
servers without tool calling and the recorded token ids behave the same as in
solver rollouts.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path
from typing import Any

from autoenv.agents.policies.base import Conversation, PolicyReply
from autoenv.grading import AGENTCALL
from autoenv.proposer.actions import ActionLog
from autoenv.proposer.episode import ProposerEpisode, feedback_turn, from_conversation
from autoenv.proposer.models import SeedCase
from autoenv.proposer.workspace import Workspace, format_md
from autoenv.proposer.written import AuthorPolicy, removed_path
from autoenv.shared.actions import ReadFileAction, RunAction, WriteFileAction
from autoenv.validate.calibration import CalibrationReport
from autoenv.validate.judge import Judgement
from autoenv.vocab import Method

#: A list item or paragraph of a skill that names a command only the agentic method can run.
_RUNS_ONLY = re.compile(r"autoenv-child|tools/check_task\.py")


def skills_for(workspace: Workspace, *, runs: bool) -> str:
    """The workspace's skills as one text; for a method that runs nothing, without the items that tell it to run
    a command (a proposer's own skills may say "validate with autoenv-child validate")."""
    texts = [p.read_text() for p in sorted(workspace.skills.glob("*.md"))]
    if not runs:
        texts = ["\n".join(_without_run_items(t.splitlines())) for t in texts]
    return "\n\n".join(texts)


def _without_run_items(lines: list[str]) -> list[str]:
    """Drop every list item (its first line and the indented lines that continue it) that names a command."""
    items: list[list[str]] = []
    for line in lines:
        continues = (
            items and line.startswith((" ", "\t")) and line.strip() and items[-1][0].lstrip()[:1] in "-*0123456789"
        )
        if continues:
            items[-1].append(line)
        else:
            items.append([line])
    return [line for item in items if not _RUNS_ONLY.search("\n".join(item)) for line in item]


def budget_text(method: Method | str, *, rollouts: int, max_rounds: int, repair_rounds: int | None) -> str:
    """The numbers a brief refers to: calibration rollouts and each round budget, in words (``repair_rounds``
    None: one budget of ``max_rounds`` judged drafts, repairs and new variants alike, as the scripted proposer
    spends it)."""
    calibration = (
        f"Calibration runs the current solver {rollouts} times (K = {rollouts}): the task is accepted when at least "
        f"one rollout passes and at least one fails."
    )
    if method == Method.PROMPT:
        return f"{calibration} Your one reply is judged as it is: there is no round after it."
    if method == Method.AGENTIC:
        return (
            f"You have {max_rounds} validation rounds (a round is one `autoenv-child validate`; `check` is free). "
            f"{calibration}"
        )
    if repair_rounds is None:
        return (
            f"{calibration} You have {max_rounds} judged drafts in all, this first one included: after each verdict "
            "you may repair the task or write a new variant. Every verdict lists, for each calibration rollout, the "
            "solver's reward, its turns, its commands and where it stopped."
        )
    return (
        f"{calibration} After each verdict you may rewrite the task, within two separate budgets: "
        f"{repair_rounds} repair rounds (a reply after an invalid verdict, to make the task valid) and "
        f"{max_rounds} difficulty rounds (calibrated drafts, this first one included, to reach the right "
        "difficulty). A repair round does not cost a difficulty round. Every verdict says what is left of each, and "
        "for each calibration rollout the solver's reward, its turns, its commands and where it stopped."
    )


def brief(
    case: SeedCase,
    workspace: Workspace,
    task_name: str,
    *,
    method: Method | str = Method.FEEDBACK,
    rollouts: int = 4,
    max_rounds: int = 3,
    repair_rounds: int | None = 3,
) -> str:
    """The proposer's instruction for one method: what to build, from which failure, with the tools that method
    honours and the numbers it refers to (rollouts, rounds)."""
    runs = method == Method.AGENTIC
    skills = skills_for(workspace, runs=runs)
    # only lines that are lessons (the file starts with a heading): an empty section is left out
    lessons = "\n".join([ln for ln in workspace.lessons().splitlines() if ln.startswith("- ")][-30:])
    seed_yaml = (
        (workspace.root / "seed_case.yaml").read_text()
        if (workspace.root / "seed_case.yaml").is_file()
        else case.model_dump_json(indent=2)
    )
    budget = budget_text(method, rollouts=rollouts, max_rounds=max_rounds, repair_rounds=repair_rounds)
    if runs:
        how = f"""\
You work in /workspace (a sandbox): seed_case.yaml, FORMAT.md, skills/, tools/, memory/ and tasks/ are there.
Write the new task into tasks/{task_name}/. You may run commands, read and write files, and improve
skills/ and tools/ for next time. Two commands are served by the harness in separate sandboxes:

    autoenv-child validate tasks/{task_name}   # full validation: each check and what to fix
    autoenv-child solve tasks/{task_name}      # {rollouts} solver rollouts: pass rate, verdict, and per rollout
                                               # the reward, turns, the solver's commands and where it stopped

{budget} Run each as a command of its own (not in a pipeline); `-k K` asks
for another number of rollouts. What the solver did in each calibration is also kept in memory/solver/.
When the task is valid and the solver passes it sometimes but not always, call finish with the task
folder (tasks/{task_name}) as the message."""
    else:
        reply = "this one reply" if method == Method.PROMPT else "your first reply"
        how = f"""\
Write every file of the task with `write_file` calls, paths relative to the task folder
(`instruction.md`, `task.toml`, `environment/Dockerfile`, `environment/app/...`, `solution/solve.sh`,
`tests/test.sh`, `tests/test_outputs.py`), all in {reply}, then call `finish`. The task folder is
tasks/{task_name}. Nothing runs here: you cannot run, read or test anything; the harness judges the files you
wrote. `write_file` writes text as UTF-8 exactly as given (CR, NUL and non-ASCII kept); for bytes that are not
UTF-8, give their base64 with `encoding: "base64"`. The broker `tests/agentcall.py` is copied in for you.

{budget}"""
    return f"""\
You design training tasks (Harbor format) for a terminal agent, from a failure of that agent.

## Seed case (the failure to learn from)

```yaml
{seed_yaml.strip()}
```

Design a NEW task that trains the target skill: new data and a new twist, not a copy of the original.
It must be valid (see the rules) and of the right difficulty: the current solver should pass it
sometimes, not always and not never.

## How to work

{how}

## Format

{format_md(runs=runs)}

## Skills

{skills}

{"## Lessons from earlier attempts" + chr(10) + chr(10) + lessons + chr(10) if lessons else ""}"""


def task_relative(path: str, task_name: str) -> str | None:
    """Map a path the model wrote to a path inside the task folder (None if it points elsewhere)."""
    p = posixpath.normpath(path.strip())
    for prefix in (f"/workspace/tasks/{task_name}/", f"tasks/{task_name}/", f"{task_name}/", "./"):
        if p.startswith(prefix):
            p = p[len(prefix) :]
    if p.startswith("/") or p.startswith("..") or not p or p == ".":
        return None
    return p


class ModelTaskWriter:
    """One conversation with a served model that writes (and rewrites) one task."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None,
        base_url: str | None,
        seed: int | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ):
        self.policy = AuthorPolicy(
            model=model, base_url=base_url, api_key=api_key, seed=seed, temperature=temperature, max_tokens=max_tokens
        )
        self.conversation: Conversation | None = None
        self.replies: list[PolicyReply] = []

    async def aclose(self) -> None:
        await self.policy.aclose()

    async def draft(self, instruction: str, task_name: str) -> tuple[dict[str, bytes], list[str]]:
        """First reply: the whole task. Returns (files, deletions)."""
        self.conversation = Conversation(instruction=instruction, workdir=None)
        return await self._turn(task_name)

    async def revise(self, feedback: str, task_name: str) -> tuple[dict[str, bytes], list[str]]:
        """A feedback round: answer the last reply's calls, attach the validator's feedback, get rewritten files."""
        assert self.conversation is not None and self.replies, "draft() first"
        self.conversation.turns.append(feedback_turn(self.replies[-1], feedback, task_name))
        return await self._turn(task_name)

    def episode(self) -> ProposerEpisode | None:
        """What the model received and sent so far: the proposer's training sample."""
        if self.conversation is None:
            return None
        return from_conversation(
            self.conversation,
            self.replies[-1] if self.replies else None,
            system=self.policy.system_prompt(),
            tools=self.policy.tool_definitions is not None,
            replies=self.replies,
        )

    async def _turn(self, task_name: str) -> tuple[dict[str, bytes], list[str]]:
        """One reply: the files it writes (their exact bytes) and the files it removes."""
        assert self.conversation is not None
        reply = await self.policy.act(self.conversation)
        self.replies.append(reply)
        files: dict[str, bytes] = {}
        deletions: list[str] = []
        for call in reply.calls:
            action = call.action
            if isinstance(action, WriteFileAction):
                rel = task_relative(action.path, task_name)
                if rel is not None:
                    files[rel] = action.data()
            elif (path := removed_path(call)) is not None:
                if (rel := task_relative(path, task_name)) is not None:
                    deletions.append(rel)
            elif isinstance(action, RunAction) and re.match(r"^\s*rm\s", action.command):  # the text format's rm
                for word in shlex.split(action.command)[1:]:
                    if not word.startswith("-") and (rel := task_relative(word, task_name)) is not None:
                        deletions.append(rel)
            elif isinstance(action, ReadFileAction):
                continue
        return files, deletions

    def transcript(self) -> list[dict[str, Any]]:
        return self.policy.messages(self.conversation) if self.conversation is not None else []


def apply_files(task_dir: Path, files: dict[str, bytes], deletions: list[str], log: ActionLog) -> None:
    """Write the model's files with the exact bytes it gave (a data file's sha256 in the tests must match what the
    model wrote), honour its removals, and copy the broker in where ``tests/test.sh`` runs pytest through it (the
    model cannot copy it: nothing runs in these methods)."""
    for rel, data in files.items():
        path = task_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel.endswith(".sh"):
            path.chmod(0o755)
        log.add("Write", f"write_file {rel} ({len(data)} bytes)")
    for rel in deletions:
        path = task_dir / rel
        if path.is_file():
            path.unlink()
            log.add("Build", f"rm {rel}")
    if copy_broker(task_dir):
        log.add("Build", "copied the broker to tests/agentcall.py (tests/test.sh runs pytest through it)")


def copy_broker(task_dir: Path) -> bool:
    """Put the broker at ``tests/agentcall.py`` when ``tests/test.sh`` names it and it is missing; True if copied."""
    test_sh, broker = task_dir / "tests" / "test.sh", task_dir / "tests" / "agentcall.py"
    if broker.exists() or not test_sh.is_file() or "agentcall" not in test_sh.read_text(errors="replace"):
        return False
    broker.write_text(AGENTCALL)
    return True


def solver_report(calibration: CalibrationReport | None) -> str:
    """Per calibration rollout: the solver's reward, turns, commands and where it stopped (empty without one)."""
    if calibration is None or not calibration.rollouts:
        return ""
    lines = [f"What the solver did ({calibration.settings.solver}, {len(calibration.rollouts)} rollouts):"]
    for i, rollout in enumerate(calibration.rollouts, 1):
        lines += rollout.describe(i)
    return "\n".join(lines)


def model_feedback(verdict: Judgement, *, repairs_left: int, variants_left: int) -> str:
    """What the model reads after a verdict: the validator's feedback, the calibration with what the solver did in
    each rollout, and the rounds left of each budget."""
    parts = [verdict.feedback(), solver_report(verdict.calibration if verdict.valid else None)]
    parts.append(rounds_text(repairs_left=repairs_left, variants_left=variants_left))
    return "\n\n".join(p for p in parts if p)


def rounds_text(*, repairs_left: int, variants_left: int) -> str:
    """The budgets after a verdict, as the model is told them."""
    return (
        f"Rounds left: {repairs_left} repair rounds (to make an invalid task valid), {variants_left} difficulty "
        "rounds (a new calibrated draft); a repair round does not cost a difficulty round."
    )

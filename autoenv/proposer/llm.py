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
from typing import Any

from autoenv.agents.policies import make_policy
from autoenv.agents.policies.base import Conversation, PolicyReply
from autoenv.proposer.episode import ProposerEpisode, feedback_turn, from_conversation
from autoenv.proposer.models import SeedCase
from autoenv.proposer.workspace import Workspace
from autoenv.shared.actions import ReadFileAction, RunAction, WriteFileAction


def brief(
    case: SeedCase,
    workspace: Workspace,
    task_name: str,
    *,
    agentic: bool = False,
    rollouts: int = 4,
    max_rounds: int = 3,
) -> str:
    """The proposer's instruction: what to build, from which failure, under which rules."""
    skills = "\n\n".join(p.read_text() for p in sorted(workspace.skills.glob("*.md")))
    # only lines that are lessons (the file starts with a heading): an empty section is left out
    lessons = "\n".join([ln for ln in workspace.lessons().splitlines() if ln.startswith("- ")][-30:])
    seed_yaml = (
        (workspace.root / "seed_case.yaml").read_text()
        if (workspace.root / "seed_case.yaml").is_file()
        else case.model_dump_json(indent=2)
    )
    if agentic:
        how = f"""\
You work in /workspace (a sandbox): seed_case.yaml, FORMAT.md, skills/, tools/, memory/ and tasks/ are there.
Write the new task into tasks/{task_name}/. You may run commands, read and write files, and improve
skills/ and tools/ for next time. Two commands are served by the harness in separate sandboxes:

    autoenv-child validate tasks/{task_name}   # full validation: each check and what to fix ({max_rounds} rounds)
    autoenv-child solve tasks/{task_name}      # {rollouts} solver rollouts: pass rate, verdict, each rollout's end

You have {max_rounds} validation rounds (a round is one `validate`; `check` is free) and calibration runs
{rollouts} rollouts (`-k K` for another number). Run each as a command of its own (not in a pipeline).
When the task is valid and the solver passes it sometimes but not always, call finish with the task
folder (tasks/{task_name}) as the message."""
    else:
        how = f"""\
Write every file of the task with `write_file` calls, paths relative to the task folder
(`instruction.md`, `task.toml`, `environment/Dockerfile`, `environment/app/...`, `solution/solve.sh`,
`tests/test.sh`, `tests/test_outputs.py`), all in this one reply; nothing can be run here. The task
folder is tasks/{task_name}. Then call `finish`."""
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

{(workspace.root / "FORMAT.md").read_text() if (workspace.root / "FORMAT.md").is_file() else ""}

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
        self.policy = make_policy(
            "openai",
            model=model,
            base_url=base_url,
            api_key=api_key,
            seed=seed,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        self.conversation: Conversation | None = None
        self.replies: list[PolicyReply] = []

    async def aclose(self) -> None:
        await self.policy.aclose()

    async def draft(self, instruction: str, task_name: str) -> tuple[dict[str, str], list[str]]:
        """First reply: the whole task. Returns (files, deletions)."""
        self.conversation = Conversation(instruction=instruction, workdir=None)
        return await self._turn(task_name)

    async def revise(self, feedback: str, task_name: str) -> tuple[dict[str, str], list[str]]:
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

    async def _turn(self, task_name: str) -> tuple[dict[str, str], list[str]]:
        assert self.conversation is not None
        reply = await self.policy.act(self.conversation)
        self.replies.append(reply)
        files: dict[str, str] = {}
        deletions: list[str] = []
        for action in reply.actions:
            if isinstance(action, WriteFileAction):
                rel = task_relative(action.path, task_name)
                if rel is not None:
                    files[rel] = action.content
            elif isinstance(action, RunAction) and re.match(r"^\s*rm\s", action.command):
                for word in shlex.split(action.command)[1:]:
                    if not word.startswith("-") and (rel := task_relative(word, task_name)) is not None:
                        deletions.append(rel)
            elif isinstance(action, ReadFileAction):
                continue
        return files, deletions

    def transcript(self) -> list[dict[str, Any]]:
        return self.policy.messages(self.conversation) if self.conversation is not None else []

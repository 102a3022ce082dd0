"""The offline agentic proposer: the template proposer acting through the terminal agent's tools.

It writes the files, validates in a child sandbox, reads the feedback, repairs and runs the solver, like a
model would, so the agentic method runs (and is tested) without one.
"""

from __future__ import annotations

import posixpath
import shlex
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

from autoenv.agents.policies.base import ActionResult, Conversation
from autoenv.agents.policies.plans import PlanPolicy
from autoenv.agents.policies.recipes import Plan
from autoenv.families.base import write_files
from autoenv.proposer.child import CHILD, AgenticJob
from autoenv.proposer.episode import write_actions
from autoenv.proposer.fixer import repair
from autoenv.proposer.scripted import ScriptedProposer
from autoenv.proposer.workspace import Workspace
from autoenv.shared.actions import FinishAction, ReadFileAction, RunAction

# -- the scripted proposer, acting through tools ---------------------------------------------


Episode = Generator[Plan, list[ActionResult], None]


class ScriptedAgenticPolicy(PlanPolicy):
    """The template proposer as a terminal-agent policy: every step is a real tool call in the sandbox."""

    name = "scripted"
    policy_version = "scripted-proposer-1"
    finished_message = "done"
    exhausted_message = "Nothing left to do."

    def __init__(self, job: AgenticJob):
        super().__init__()
        self.job = job
        self.proposer = ScriptedProposer(
            seed=job.options.seed, flaw_rate=job.options.flaw_rate, workspace=Workspace(job.workspace)
        )

    def start(self, conversation: Conversation) -> Episode:
        return self._play()

    def _play(self) -> Episode:
        case, job = self.job.case, self.job
        yield Plan(
            [RunAction(command="cat seed_case.yaml && ls skills tools memory tasks | head -50")],
            "Read the seed case and see what the workspace holds.",
        )
        yield Plan(
            [
                ReadFileAction(path="skills/writing-tasks.md"),
                ReadFileAction(path="skills/fixing-feedback.md"),
                RunAction(command="tail -n 20 memory/lessons.md"),
            ],
            "Read my skills and what earlier validations taught me.",
        )
        family = self.proposer.family(case)
        draft = self.proposer.draft(case, job.attempt)
        rounds, variant = 0, 0
        while True:
            base = f"tasks/{draft.name}"
            folders = sorted({posixpath.dirname(f"{base}/{rel}") for rel in draft.files})
            yield Plan(
                [RunAction(command="mkdir -p " + " ".join(shlex.quote(f) for f in folders))],
                f"Lay out {base} for a {family.name} task ({family.description}).",
                {"task": draft.name},
            )
            yield Plan(
                [a for rel, data in sorted(draft.files.items()) for a in write_actions(f"{base}/{rel}", data)],
                f"Write the task: {draft.summary()}.",
            )
            yield Plan(
                [
                    RunAction(
                        command=f"chmod +x {base}/solution/solve.sh {base}/tests/test.sh && python3 "
                        f"tools/check_task.py {base}"
                    )
                ],
                "Make the scripts executable and run the static pre-flight check.",
            )
            files: dict[str, str | bytes] = dict(draft.files)
            while True:
                rounds += 1
                results = yield Plan([RunAction(command=f"{CHILD} validate {base}")], "Validate it in a child sandbox.")
                output = results[0].output if results else ""
                if output.startswith("VALID"):
                    break
                if rounds >= job.options.max_rounds:
                    yield Plan(
                        [FinishAction(message=f"{base}: still invalid after {rounds} validation rounds")],
                        "Out of rounds.",
                    )
                    return
                files, writes, deletes, fixes = _repair_files(files, output)
                if not fixes:
                    yield Plan(
                        [FinishAction(message=f"{base}: I cannot tell how to fix what validation reports")],
                        "No repair applies.",
                    )
                    return
                actions: list[Any] = [
                    a for rel, data in sorted(writes.items()) for a in write_actions(f"{base}/{rel}", data)
                ]
                if deletes:
                    actions.append(
                        RunAction(command="rm -f " + " ".join(shlex.quote(f"{base}/{rel}") for rel in deletes))
                    )
                yield Plan(actions, "Repair what the feedback names: " + "; ".join(fixes), {"repairs": fixes})
            results = yield Plan(
                [RunAction(command=f"{CHILD} solve {base} -k {job.options.rollouts}")],
                "The task is valid; see how the current solver does on it.",
            )
            output = results[0].output if results else ""
            if output.startswith("ACCEPTED") or rounds >= job.options.max_rounds:
                verdict = output.splitlines()[0] if output else "no verdict"
                note = f"- {case.id}: {base} ({family.name}) -> {verdict}\n"
                yield Plan(
                    [RunAction(command=f"cat >> memory/notes.md <<'NOTE'\n{note}NOTE")],
                    "Note the outcome for next time.",
                )
                yield Plan([FinishAction(message=f"{base}: {verdict}")], "Done.")
                return
            variant += 1
            draft = self.proposer.draft(
                case, job.attempt, variant=variant, allow_flaw=False
            )  # its validation is the next round


def _repair_files(
    files: dict[str, str | bytes], feedback: str
) -> tuple[dict[str, str | bytes], dict[str, str | bytes], list[str], list[str]]:
    """Run the fixer on a scratch copy of the task; return (new files, changed, deleted, repair notes)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "task"
        write_files(root, files)
        fixes = [str(r) for r in repair(root, feedback)]
        new: dict[str, str | bytes] = {}
        for path in root.rglob("*"):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                new[rel] = path.read_bytes() if isinstance(files.get(rel), bytes) else path.read_text()
    writes = {rel: data for rel, data in new.items() if files.get(rel) != data}
    deletes = sorted(set(files) - set(new))
    return new, writes, deletes, fixes

"""Inputs: the tests should not trust inputs the agent can edit.

A test that recomputes the expected answer from an input in the agent's work folder (or lets a file there decide
what is checked) is beaten by emptying that input and writing the matching trivial output (the ``inputs``
shortcut cheat tries exactly that). Where the verifier reads the agent's copy of an input the image ships (a
shared-mode verifier, or a separate one whose artifacts bring the folder back) and does not restore the image's copy
first (``autoenv task harden``: :mod:`autoenv.taskfmt.inputs`), this check warns with the file and line;
``--strict`` makes it an error. Data files only: a program or config the task asks to fix is the deliverable, and
the tests must read it; a test file that checks a checksum is taken to verify what it reads.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from autoenv.taskfmt.check import Level, Problem
from autoenv.taskfmt.inputs import CHECKSUM, DATA_SUFFIXES, deliverable, restored_inputs
from autoenv.taskfmt.inputs import agent_copy_graded as _graded
from autoenv.validate.checks.base import BUILD, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.reads import in_image, test_reads, unreadable_image


def checksummed(ctx: Context, test_file: str) -> bool:
    """Whether the test file checks a checksum (of its inputs, presumably: a test that does trusts no edit)."""
    try:
        return CHECKSUM.search((ctx.task_dir / test_file).read_text(errors="replace")) is not None
    except OSError:
        return False


def agent_copy_graded(ctx: Context, path: str) -> bool:
    """Whether the verifier sees the agent's copy of ``path`` rather than the image's (a hardened task restores the
    image's copy of its named inputs before the tests run: :mod:`autoenv.taskfmt.inputs`)."""
    return _graded(ctx.task.config, path) and path not in restored_inputs(ctx.task_dir)


class InputsCheck(Check):
    name = "inputs"
    stage = BUILD
    may_not_run = True

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        if (why := unreadable_image(ctx)) is not None:
            return skipped(self.name, why)
        instruction = ctx.task.instruction
        seen: set[str] = set()
        findings, editable = [], []
        for read in test_reads(ctx.task_dir):
            path = read.path
            if path in seen or PurePosixPath(path).suffix.lower() not in DATA_SUFFIXES or not in_image(ctx, path):
                continue
            seen.add(path)
            if deliverable(instruction, path) or not agent_copy_graded(ctx, path) or checksummed(ctx, read.file):
                continue
            editable.append(path)
            findings.append(
                Problem(
                    path=str(ctx.task_dir / read.file),
                    line=read.line,
                    rule="autoenv-editable-input",
                    level=Level.WARNING,
                    message=f"the tests read the input {path}, and the verifier gets the agent's copy of it: an agent "
                    "that edits it (empties it) changes what the tests expect",
                    advice="`autoenv task harden` puts the image's copy back before the tests run (an input the "
                    "instruction names, or one listed under [metadata] inputs = [...]); or keep a copy of the input in "
                    "tests/ and compute the expected values from it, or check its checksum before trusting it",
                )
            )
        return CheckResult(
            name=self.name,
            passed=True,
            summary=f"the tests trust {len(findings)} input(s) the agent can edit (warnings)"
            if findings
            else "the tests trust no input the agent can edit",
            evidence={"editable_inputs": sorted(editable)},
            findings=findings,
        )


CHECK = InputsCheck()

"""Solvable: every file the tests read exists in the image or is an output the instruction names.

Without a reference solution nothing shows a correct answer can pass, and the commonest way none can is a test
reading a file nobody creates: the Dockerfile put the data elsewhere, or the test expects an output the instruction
never asks for. Doing nothing gets 0 and every cheat gets 0, so nop and tamper accept such a task; the only way to
reward 1 is to edit the inputs, the worst thing a policy can learn. Read statically from the tests
(:mod:`autoenv.validate.checks.reads`) against the built image, so it costs no trial.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from autoenv.taskfmt.check import Level, Problem
from autoenv.validate.checks.base import BUILD, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.fields import missing_field_problems, missing_fields
from autoenv.validate.checks.reads import Read, in_image, test_reads, unreadable_image


def _mentions(instruction: str, text: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(text)}/?(?![\w.-])", instruction) is not None


def named_by(instruction: str, path: str, output_folders: list[str] = ()) -> bool:
    """Whether the instruction names ``path`` as something to write: in full, by its file name, or as a file in an
    output folder it names (``output_folders``: the folders above ``path`` that the image does not have)."""
    name = PurePosixPath(path).name
    if _mentions(instruction, path) or ("." in name and _mentions(instruction, name)):
        return True
    return any(_mentions(instruction, folder) for folder in output_folders)


def unreadable(ctx: Context, reads: list[Read]) -> list[Read]:
    """The reads of files neither the image ships nor the instruction names (each path once, first read)."""
    instruction = ctx.task.instruction
    seen: dict[str, Read] = {}
    for read in reads:
        if read.path in seen or in_image(ctx, read.path):
            continue
        parents = [str(p) for p in PurePosixPath(read.path).parents if str(p) != "/"]
        if named_by(instruction, read.path, [p for p in parents if not in_image(ctx, p)]):
            continue
        seen[read.path] = read
    return list(seen.values())


class SolvableCheck(Check):
    name = "solvable"
    stage = BUILD
    may_not_run = True  # the image cannot be read on every backend

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        if (why := unreadable_image(ctx)) is not None:
            return skipped(self.name, why)
        reads = test_reads(ctx.task_dir)
        missing = unreadable(ctx, reads)
        fields = missing_fields(ctx)  # the fields the tests read from a shipped input's records, missing there
        evidence = {"reads": sorted({r.path for r in reads}), "missing": [r.path for r in missing]}
        if fields:
            evidence["missing_fields"] = [f"{f.path}: {f.field}" for f in fields]
        if not missing and not fields:
            return CheckResult(
                name=self.name,
                passed=True,
                summary=f"every file the tests read ({len(evidence['reads'])}) is in the image or an output the "
                "instruction names",
                evidence=evidence,
            )
        findings = [
            Problem(
                path=str(ctx.task_dir / r.file),
                line=r.line,
                rule="autoenv-read-missing",
                level=Level.ERROR,
                message=f"the tests read {r.path}, which the image does not have and the instruction does not name as "
                "an output: no correct solution can create what the tests expect",
                advice="put the file where the tests read it (check the Dockerfile's COPY destination), or name it in "
                "instruction.md as an output the agent must write",
            )
            for r in missing
        ] + missing_field_problems(ctx, fields)
        said = [f"{f.path} has no field {f.field!r}" for f in fields[:5]]
        return CheckResult(
            name=self.name,
            passed=False,
            summary=f"the tests read {len(missing)} file(s) nobody creates: " + ", ".join(r.path for r in missing[:5])
            if missing
            else "the tests read fields the shipped inputs do not have: " + ", ".join(said),
            evidence=evidence,
            feedback="\n".join(f"- {f}" for f in findings),
            findings=findings,
        )


CHECK = SolvableCheck()

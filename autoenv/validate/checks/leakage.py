"""Leakage: the agent must not see what it is supposed to produce (see :mod:`autoenv.validate.leakage`).

Judged from the instruction, the image the agent starts in (the built layer, or the leak-scan trial's copy of
the environment on other backends) and what the reference solution wrote (the partial trial's record).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from autoenv.agents.partial import solution_outputs
from autoenv.taskfmt.check import Level, Problem
from autoenv.validate.checks.base import SECOND, Check, CheckResult, Context, Outcomes
from autoenv.validate.leakage import (
    EXTRACTED_SKIP,
    PACKAGE_DIRS,
    LeakFinding,
    extracted_root,
    scan_expected_values,
    scan_extracted,
    scan_outputs_in_instruction,
    scan_tree,
)


def check_leakage(
    image_findings: list[LeakFinding] | None,
    instruction_findings: list[LeakFinding],
    *,
    image_note: str = "",
    task_dir: Path | None = None,
) -> CheckResult:
    """Combine image and instruction findings; ``image_findings`` None means the image was not scanned.

    Warning-level findings (a worked example that states a small share of what the tests check) are reported
    as the check's findings and do not fail it.
    """
    every = list(instruction_findings) + list(image_findings or [])
    evidence: dict[str, Any] = {
        "findings": [f.model_dump() for f in every],
        "image_scanned": image_findings is not None,
    }
    if image_note:
        evidence["image_note"] = image_note
    instruction = str((task_dir / "instruction.md") if task_dir else "instruction.md")
    warnings = [
        Problem(
            path=instruction,
            message=f.detail,
            rule="autoenv-worked-example",
            level=Level.WARNING,
            advice="fine as a worked example; keep the stated values a small part of what the tests check (more "
            "hidden cases, other inputs), or state how to check a result instead of the result",
        )
        for f in every
        if f.level == "warning"
    ]
    findings = [f for f in every if f.level != "warning"]
    if not findings:
        if image_findings is None:
            return CheckResult(
                name="leakage",
                passed=None,
                summary=f"instruction clean; image not scanned ({image_note or 'no image'})",
                evidence=evidence,
                findings=warnings,
            )
        return CheckResult(
            name="leakage",
            passed=True,
            summary="no solution, tests or expected answers visible to the agent"
            + (f" ({len(warnings)} warning(s): a worked example in the instruction)" if warnings else ""),
            evidence=evidence,
            findings=warnings,
        )
    lines = "\n".join(f"- {f}" for f in findings[:15])
    kinds = sorted({f.kind for f in findings})
    advice = []
    if any(k.endswith("_in_image") and not k.startswith("expected_") for k in kinds):
        advice.append(
            "Do not COPY solution or test files (or their contents) into the environment; Harbor uploads tests/ only "
            "after the agent finishes."
        )
    if any(k.startswith("expected_") for k in kinds):
        advice.append(
            "Keep the expected values out of every file the agent can read (logs, caches, dot-folders, archives): "
            "ship only the inputs, and compute the answers in the tests or put them in tests/."
        )
    if any(k.endswith("_in_instruction") for k in kinds):
        advice.append(
            "Do not state the expected results (or the solution) in instruction.md; describe what to compute, not the "
            "result."
        )
    return CheckResult(
        name="leakage",
        passed=False,
        summary=f"{len(findings)} leak(s): {', '.join(kinds)}",
        evidence=evidence,
        feedback="The agent can see what it is supposed to produce:\n" + lines + "\n" + " ".join(advice),
        findings=warnings,
    )


def warnings_count(result: CheckResult) -> CheckResult:
    """``--strict`` for a behavioural check: a passing check with warnings fails, saying which."""
    warned = result.at(Level.WARNING)
    if result.passed is not True or not warned:
        return result
    return result.model_copy(
        update={
            "passed": False,
            "summary": f"{len(warned)} warning(s), counted as errors under --strict",
            "feedback": "\n".join(f"- {w}" for w in warned),
        }
    )


async def image_scan(ctx: Context, outcomes: Outcomes) -> tuple[list[LeakFinding] | None, str]:
    """The image's static scan (copies of the solution and tests), once per validation; None: not scanned."""
    if "image_scan" not in ctx.memo:
        findings, note, started = None, "", time.monotonic()
        if ctx.image is not None:
            findings = await asyncio.to_thread(scan_tree, ctx.image.rootfs, ctx.secrets)
        elif outcomes.scan is not None:
            scan = outcomes.scan
            try:
                findings = scan_extracted(Path(scan.trial_dir or ""), ctx.secrets)
            except (FileNotFoundError, OSError) as exc:
                note = f"could not copy the environment out for scanning: {exc}; {scan.error_message or ''}".strip()
        ctx.memo["image_scan"] = (findings, note, time.monotonic() - started)
    findings, note, _ = ctx.memo["image_scan"]
    return (None if findings is None else list(findings)), note


class LeakageCheck(Check):
    name = "leakage"
    stage = SECOND

    # what the reference solution wrote comes from the partial trial's record
    trials = frozenset({"partial", "scan"})

    async def early(self, ctx: Context) -> CheckResult | None:
        build = ctx.results.get("build")
        if build is None:
            return None
        instruction = ctx.instruction_findings
        if build.passed is False:
            return check_leakage(None, instruction, image_note="the environment did not build", task_dir=ctx.task_dir)
        # the image's static scan is reported when it found a leak (it is already paid for); else "not run"
        findings, note = await image_scan(ctx, ctx.outcomes)
        static = check_leakage(findings, instruction, image_note=note, task_dir=ctx.task_dir)
        return static if static.passed is False else None

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        secrets = ctx.secrets
        image_findings, image_note = await image_scan(ctx, outcomes)
        partial = outcomes.partial
        outputs = solution_outputs(partial.trial_dir) if partial is not None and partial.trial_dir else {}
        instruction_findings = list(ctx.instruction_findings)
        if outputs:
            instruction_findings += scan_outputs_in_instruction(ctx.task_dir, outputs, secrets)
        # the expected values (the tests' literals, what the solution wrote) in any file the agent can read
        base = None
        readable: Any
        if ctx.image is not None:
            readable, skip = ctx.image.rootfs, PACKAGE_DIRS
            dockerfile = ctx.task_dir / "environment" / "Dockerfile"
            if dockerfile.is_file():
                base = await asyncio.to_thread(ctx.backend.base_rootfs, dockerfile.read_text(errors="replace"))
        else:
            scan_dir = outcomes.scan.trial_dir if outcomes.scan is not None else None
            readable, skip = extracted_root(Path(scan_dir or ".")), EXTRACTED_SKIP
        started = time.monotonic()
        if image_findings is not None and readable.is_dir():
            image_findings += await asyncio.to_thread(
                scan_expected_values, readable, ctx.task_dir, secrets, outputs, skip=skip, base=base
            )
        result = check_leakage(image_findings, instruction_findings, image_note=image_note, task_dir=ctx.task_dir)
        result.seconds = round(ctx.memo["image_scan"][2] + time.monotonic() - started, 3)
        return result


CHECK = LeakageCheck()

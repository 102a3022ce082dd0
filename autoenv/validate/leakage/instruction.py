"""Leaks in instruction.md: the tests' expected values, the solution's code, or what the solution writes."""

from __future__ import annotations

import math
import re
from pathlib import Path

from num2words import num2words

from autoenv.validate.leakage.literals import LeakFinding, Secrets, normalize, task_secrets, token_in

#: Stated values at or above this share of what the tests check make the instruction a leak (an error); below
#: it they are a worked example (a warning): hard-coding them passes a small part of the tests.
LEAK_SHARE = 0.5


def scan_instruction(task_dir: Path, secrets: Secrets | None = None) -> list[LeakFinding]:
    """Expected answers or most of the solution's code written into instruction.md."""
    secrets = secrets or task_secrets(task_dir)
    path = task_dir / "instruction.md"
    instruction = path.read_text(errors="replace") if path.is_file() else ""
    findings: list[LeakFinding] = []
    # judged by how much of what the tests check the instruction gives away: every value is one check
    stated: list[tuple[str, str, str]] = []  # (what, source, detail)
    for forms, source in secrets.answer_values.values():
        shown = next((f for f in forms if token_in(instruction, f)), None)
        if shown is not None and not any(token_in(secrets.public_text, f) for f in forms):
            stated.append((shown, source, f"the tests expect {shown!r} and the instruction states it"))
    for line, source in secrets.answer_lines.items():
        if line in instruction and line not in secrets.public_text:
            stated.append((line, source, f"expected-output row {line[:80]!r} is in the instruction"))
    # what the tests check beyond the inputs (an id the tests match rows by is in the data, not an answer)
    checked = sum(
        not any(token_in(secrets.public_text, f) for f in forms) for forms, _ in secrets.answer_values.values()
    )
    checked += sum(line not in secrets.public_text for line in secrets.answer_lines)
    if stated:
        share = len(stated) / max(1, checked)
        count = f"{len(stated)} of the {checked} values the tests check"
        if share >= LEAK_SHARE:
            for _what, source, detail in stated:
                findings.append(
                    LeakFinding(
                        kind="answer_in_instruction",
                        where="instruction.md",
                        source=source,
                        detail=f"{detail} ({count} are stated)",
                    )
                )
        else:
            sources = sorted({source for _, source, _ in stated})
            findings.append(
                LeakFinding(
                    kind="answer_in_instruction",
                    where="instruction.md",
                    source=", ".join(sources),
                    detail=f"the instruction states {count} (e.g. {stated[0][0][:60]!r}): a worked example, since "
                    f"hard-coding them passes under {LEAK_SHARE:.0%} of the checks; an error at {LEAK_SHARE:.0%} "
                    "or more",
                    level="warning",
                )
            )
    instruction_lines = {normalize(line) for line in instruction.splitlines()}
    for src in secrets.sources:
        if src.role != "solution" or len(src.lines) < 2:
            continue
        shared = src.lines & instruction_lines
        if len(shared) >= max(2, math.ceil(0.5 * len(src.lines))):
            findings.append(
                LeakFinding(
                    kind="solution_in_instruction",
                    where="instruction.md",
                    source=src.rel,
                    detail=f"{len(shared)}/{len(src.lines)} distinctive lines of the solution, e.g. "
                    f"{sorted(shared)[0][:80]!r}",
                )
            )
    return findings


def _meaningful(value: str) -> bool:
    """Long or numeric enough that finding it in the instruction is not chance ("ok", "0", "yes" are not)."""
    return len(value) >= 6 or (len(value) >= 3 and any(c.isdigit() for c in value))


def _words(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).replace(" and ", " ").split()) + " "


def number_in_words(value: str) -> str | None:
    """``5004`` -> ``five thousand four`` (num2words, "and" and hyphens dropped), for numbers of two words or more."""
    try:
        number = int(value) if re.fullmatch(r"-?\d+", value) else float(value)
    except ValueError:
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return None
    words = _words(num2words(number)).strip()
    return words if len(words.split()) >= 2 else None


def scan_outputs_in_instruction(
    task_dir: Path, outputs: dict[str, str], secrets: Secrets | None = None
) -> list[LeakFinding]:
    """What the reference solution wrote, found in instruction.md: the "example output" that is the answer.

    ``outputs`` maps each file the solution created or changed to its content (from the partial-solution
    trial). A one-value output found verbatim, or most of the distinctive lines of a longer one, is a leak,
    unless the same text is in the environment's own files (then it is data the agent is meant to read).
    Literal values of the tests are only one way to state an answer; this finds it however the tests check.
    """
    secrets = secrets or task_secrets(task_dir)
    path = task_dir / "instruction.md"
    instruction = normalize(path.read_text(errors="replace")) if path.is_file() else ""
    public = normalize(secrets.public_text)
    findings: list[LeakFinding] = []
    for output, content in sorted(outputs.items()):
        lines = [normalize(line) for line in content.splitlines() if normalize(line)]
        if not lines:
            continue
        if len(lines) == 1:
            value = lines[0]
            if _meaningful(value) and token_in(instruction, value) and not token_in(public, value):
                findings.append(
                    LeakFinding(
                        kind="output_in_instruction",
                        where="instruction.md",
                        source=output,
                        detail=f"the reference solution writes {value[:80]!r} to {output} and the instruction states "
                        f"it",
                    )
                )
            elif (
                (words := number_in_words(value))
                and f" {words} " in _words(instruction)
                and not token_in(public, value)
            ):
                findings.append(
                    LeakFinding(
                        kind="output_in_instruction",
                        where="instruction.md",
                        source=output,
                        detail=f"the reference solution writes {value!r} to {output} and the instruction states it in "
                        f"words ({words!r})",
                    )
                )
            continue
        distinct = {line for line in lines if _meaningful(line) and line not in public}
        shown = {line for line in distinct if line in instruction}
        if len(distinct) >= 2 and len(shown) >= max(2, math.ceil(0.5 * len(distinct))):
            findings.append(
                LeakFinding(
                    kind="output_in_instruction",
                    where="instruction.md",
                    source=output,
                    detail=f"{len(shown)}/{len(distinct)} lines the reference solution writes to {output} are in "
                    f"the instruction, e.g. {sorted(shown)[0][:80]!r}",
                )
            )
    return findings

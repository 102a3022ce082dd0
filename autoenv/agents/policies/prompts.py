"""Prompt text shared by all policies, so SFT data from the scripted policy and
RL rollouts from a served model start from the same context."""

from __future__ import annotations

import re

from autoenv.shared.actions import TEXT_FORMAT_HELP

_PREAMBLE = """\
You are an autonomous agent working in a Linux terminal to complete a task.
Nobody will answer questions: explore the files, make the changes, check
them by running them, and finish when the task is done. Keep command output
short (for example pipe it through head or tail); long outputs are shortened
in the middle."""

_TOOLS = """\
Use the tools: `run` (a bash command line), `read_file`, `write_file` and
`finish`. Each `run` starts a fresh shell in the working directory, so `cd`
and exported variables do not carry over; chain dependent commands with
`&&`. Call `finish` once the task is done."""


def system_prompt(*, tools: bool) -> str:
    return f"{_PREAMBLE}\n\n{_TOOLS if tools else TEXT_FORMAT_HELP}\n"


def _demote(markdown: str) -> str:
    """Where the text has top headings (``# A``), every heading one level down (``## A``), fenced code left as
    it is; text without a top heading is returned as it is."""
    out, fence, top = [], None, False
    for line in markdown.splitlines():
        marker = re.match(r"\s*(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else fence or marker.group(1)
        elif fence is None and re.match(r"#{1,5} ", line):
            top = top or line.startswith("# ")
            line = "#" + line
        out.append(line)
    return "\n".join(out) if top else markdown


def task_message(instruction: str, workdir: str | None, environment: str | None = None) -> str:
    """The first user message: one top heading (the instruction's own title, else ``# Task``), the instruction
    with its other headings a level down, then ``## Environment``: the sandbox's note (OS, shell, tools; see
    :mod:`autoenv.agents.environment_note`) and the working directory."""
    text = instruction.strip()
    title = re.match(r"# (.+)\n?", text)
    if title:
        heading, body = title.group(0).strip(), text[title.end() :].lstrip("\n")
    else:
        heading, body = "# Task", text
    parts = [heading, _demote(body)] if body else [heading]
    facts = [line for line in (environment or "").splitlines() if line.strip()]
    if workdir:
        facts.append(f"- Working directory: {workdir}")
    if facts:
        parts.append("## Environment\n\n" + "\n".join(facts))
    return "\n\n".join(parts)


def command_limit_note(seconds: float) -> str:
    """The environment note's line on how long a command may run, which the model cannot find out otherwise
    but by losing a command to it, and on what survives: background work does (the local backend kills only what
    a timed-out command started; Harbor's Docker exec kills nothing)."""
    return (
        f"- Commands: each may run for at most {seconds:g} s; one that runs longer is stopped, with what it "
        "started. Work started in the background (`nohup CMD > LOG 2>&1 &`) keeps running between commands."
    )


def invalid_reply_feedback(reason: str, *, tools: bool) -> str:
    how = (
        "Call one of the tools run, read_file, write_file or finish."
        if tools
        else "Reply with at least one ```run, ```read_file, ```write_file or ```finish block."
    )
    return f"ERROR: your last reply could not be executed: {reason}. Nothing was run. {how}"

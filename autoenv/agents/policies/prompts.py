"""Prompt text shared by all policies, so SFT data from the scripted policy and
RL rollouts from a served model start from the same context."""

from __future__ import annotations

from autoenv.agents.policies.actions import TEXT_FORMAT_HELP

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


def task_message(instruction: str, workdir: str | None) -> str:
    where = f"\n\nThe working directory is {workdir}." if workdir else ""
    return f"# Task\n\n{instruction.strip()}{where}"


def invalid_reply_feedback(reason: str, *, tools: bool) -> str:
    how = (
        "Call one of the tools run, read_file, write_file or finish."
        if tools
        else "Reply with at least one ```run, ```read_file, ```write_file or ```finish block."
    )
    return f"ERROR: your last reply could not be executed: {reason}. Nothing was run. {how}"

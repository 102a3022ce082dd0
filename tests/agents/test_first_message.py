"""The terminal agent's first message: one top heading, the instruction, and an environment note the sandbox
itself reported (OS, shell, which tools and which flavour), probed with one exec and cached per image."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

from agent_helpers import REPO, needs_sandbox, trial_files
from harbor.environments.base import ExecResult

from autoenv.agents import environment_note
from autoenv.agents.environment_note import PROBE, image_key, note, parse, probe
from autoenv.agents.policies.prompts import task_message
from autoenv.trials.runner import run_trial

#: A bundled task whose image has no Python: ``FROM ubuntu:24.04`` (a Debian minbase stands in where no
#: registry answers), a shell-only task.
NO_PYTHON_TASK = REPO / "tests" / "validate" / "reviewed" / "ubuntu-needs-file"


def top_headings(markdown: str) -> list[str]:
    lines, fence = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("# "):
            lines.append(line)
    return lines


def test_one_top_heading_whatever_the_instruction_has():
    titled = task_message("# Primer melting temperatures\n\nCompute Tm.\n\n# Output\n\nA CSV.\n", "/app", None)
    assert top_headings(titled) == ["# Primer melting temperatures"]
    assert "## Output" in titled and titled.endswith("## Environment\n\n- Working directory: /app")
    plain = task_message("Write hello to /app/out.txt\n\n## Notes\n\nNone.", None, "- OS: Debian")
    assert top_headings(plain) == ["# Task"] and "\n## Notes\n" in plain  # no top heading in it: left as written
    fenced = task_message("# T\n\n```sh\n# a comment, not a heading\n```\n# Second\n", None)
    assert "# a comment, not a heading" in fenced and top_headings(fenced) == ["# T"] and "## Second" in fenced


class HostShell:
    """A sandbox stand-in that runs commands in a real shell on this machine, counting them."""

    def __init__(self, dockerfile_dir: Path):
        self.environment_dir = dockerfile_dir
        self.commands: list[str] = []

    async def exec(self, command: str, timeout_sec: int | None = None, **_: object) -> ExecResult:
        self.commands.append(command)
        run = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=timeout_sec, cwd="/")
        return ExecResult(stdout=run.stdout, stderr=run.stderr, return_code=run.returncode)


def test_probe_is_one_exec_and_cached_per_image(tmp_path, monkeypatch):
    monkeypatch.setattr(environment_note, "_CACHE", {})
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    first, again = HostShell(tmp_path / "a"), HostShell(tmp_path / "a")
    workdir, text = asyncio.run(probe(first))
    assert workdir == "/" and first.commands == [PROBE]
    assert text is not None and text.startswith("- OS: ") and "awk" in text and "sed" in text
    # the same image (same Dockerfile) again: the facts are cached, only the working directory is asked
    assert asyncio.run(probe(again)) == ("/", text) and again.commands == ["pwd"]
    assert image_key(first) == image_key(again) is not None


def test_note_names_the_flavours():
    out = (
        "/app\n@os Debian GNU/Linux 12 (bookworm)\n@arch x86_64\n@bash 5.2.15(1)-release\n@sh /usr/bin/dash\n"
        "@tool python3\n@tool awk /usr/bin/mawk mawk 1.3.4 20200120\n@tool sed /usr/bin/sed sed (GNU sed) 4.9\n"
        "@tool jq /usr/bin/jq jq-1.6\n@tool git\n@tool curl\n"
    )
    workdir, box = parse(out)
    assert workdir == "/app"
    assert note(box) == (
        "- OS: Debian GNU/Linux 12 (bookworm) (x86_64); commands run in bash 5.2.15; /bin/sh is dash\n"
        "- Installed: mawk 1.3.4 (not GNU awk: no gensub or asort), GNU sed 4.9, jq 1.6\n"
        "- Not installed: python3, git, curl"
    )
    _, gnu = parse("@tool awk /usr/bin/gawk GNU Awk 5.2.1, API 3.2\n@tool sed /bin/busybox \n")
    assert "GNU awk 5.2.1" in note(gnu) and "busybox sed" in note(gnu)


@needs_sandbox
def test_first_message_on_a_task_whose_image_has_no_python(trials_dir):
    outcome = run_trial(
        NO_PYTHON_TASK, "terminal", agent_kwargs={"policy": "scripted", "seed": 0, "max_turns": 1},
        trials_dir=trials_dir,
    )  # fmt: skip
    assert outcome.error is None or "infrastructure" not in str(outcome.error), outcome.error
    steps = trial_files(outcome.trial_dir)["trajectory"]["steps"]
    first = next(s["message"] for s in steps if s["source"] == "user")
    assert top_headings(first) == ["# Task"], first  # the instruction has no title of its own
    environment = first.split("## Environment\n\n", 1)[1]
    lines = environment.splitlines()
    assert lines[0].startswith("- OS: Debian GNU/Linux") and "commands run in bash" in lines[0], first
    assert "- Not installed: python3" in environment, first
    assert "mawk" in environment and "GNU sed" in environment, first
    assert lines[-2].startswith("- Commands: each may run for at most 120 s;"), first  # the agent's default limit
    assert "keeps running between commands" in lines[-2], first
    assert lines[-1] == "- Working directory: /app", first
    # the same note reaches the policy: the trial's metadata keeps the working directory it was built with
    assert trial_files(outcome.trial_dir)["result"]["agent_result"]["metadata"]["workdir"] == "/app"


@needs_sandbox
def test_first_message_on_a_python_image_names_its_python(hello_task, trials_dir):
    outcome = run_trial(
        hello_task, "terminal", agent_kwargs={"policy": "scripted", "seed": 0, "max_turns": 1}, trials_dir=trials_dir
    )
    steps = trial_files(outcome.trial_dir)["trajectory"]["steps"]
    first = next(s["message"] for s in steps if s["source"] == "user")
    assert top_headings(first) == ["# Task"]
    assert "- Installed: python3 3." in first and not re.search(r"Not installed:.*python3", first), first


@needs_sandbox
def test_the_agentic_proposer_brief_gets_the_same_note(tmp_path):
    """The agentic proposer is a terminal agent in a sandbox: its brief arrives with the same environment note."""
    from chat_server import MODEL, ReplayServer, completion

    from autoenv.proposer.models import SeedCase
    from autoenv.proposer.propose import propose
    from autoenv.vocab import SCRIPTED_SOLVER

    case = SeedCase(
        id="env-note", task="a shell task", failure_mode="The agent assumed gawk.", target_skill="portable awk"
    )
    recording = [{"expect": {"tools": True}, "response": completion(1, calls=[("finish", {"message": "done"})])}]
    with ReplayServer(recording) as server:
        propose(
            case, method="agentic", policy="openai", model=MODEL, base_url=server.url, out_dir=tmp_path / "out",
            workspace=tmp_path / "workspace", attempts=1, solver=SCRIPTED_SOLVER, network="no-network",
        )  # fmt: skip
    assert server.problems == [] and server.served == 1, server.problems
    brief = server.chat_requests()[0]["messages"][1]["content"]
    assert top_headings(brief) == ["# Task"] and "## Seed case" in brief
    environment = brief.rsplit("## Environment\n\n", 1)[1]
    assert environment.startswith("- OS: ") and "- Installed: python3 3." in environment, environment
    assert environment.endswith("- Working directory: /workspace"), environment

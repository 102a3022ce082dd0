"""A passing attempt of the terminal agent, written back as a reference solution (``solution/solve.sh``).

A dataset that ships no solution can be shown solvable by an agent (``validate --oracle-agent``); the checks that
run the solution again (the oracle repeated, determinism, the partial solution, the timeouts and the probes) need
a script, not an agent. The terminal agent records every action it took in its ATIF trajectory
(``agent/trajectory.json``): ``run`` commands, ``write_file`` contents, reads and the finish. Replayed in order,
each the way :func:`autoenv.agents.execute.execute` ran it, they are that script:

- a ``run`` command runs in a fresh ``bash`` from the working folder the solution starts in (each of the agent's
  commands was a fresh shell in the sandbox's working folder: no ``cd`` or variable carries over), with its status
  ignored (an agent's exploration fails and goes on);
- a ``write_file`` writes the same bytes with the same commands (base64 in the script, so any content survives
  quoting);
- reads change nothing and are left out; the finish ends the script.

Only a trajectory autoenv's terminal agent wrote can be replayed (other agents' tool calls mean other things):
:func:`solution_from_trajectory` returns ``None`` for anything else, and the caller keeps the agent's attempt as
the only evidence. Whether the script really solves the task is for a trial to say (see
:mod:`autoenv.validate.checks.agent_oracle`): a replay can differ from the attempt (time, randomness).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from autoenv.agents.execute import run_script, write_scripts
from autoenv.shared.actions import FinishAction, InvalidActionError, RunAction, WriteFileAction, action_from_tool_call

#: The file the terminal agent writes its trajectory to, under the trial's ``agent/`` folder.
TRAJECTORY = "trajectory.json"
#: The agent name the terminal agent records (``TerminalAgent.name()``); other agents' tool calls mean other things.
TERMINAL_AGENT = "autoenv-terminal"

_HEADER = """#!/bin/bash
# A reference solution replayed from a passing attempt of autoenv's terminal agent ({source}).
# Each command ran in a fresh shell from the working folder, as the agent's did; their statuses are not checked.
start=$PWD
"""


def _lines(action: object) -> list[str]:
    """The action's shell texts, exactly as :mod:`autoenv.agents.execute` ran them, each in a fresh bash from the
    working folder."""
    if isinstance(action, RunAction):
        scripts = [run_script(action.command)]
    elif isinstance(action, WriteFileAction):
        scripts = write_scripts(action.path, action.data())
    else:
        return []
    return [f'(cd "$start" && bash -c {shlex.quote(script)})' for script in scripts]


def solution_from_trajectory(trajectory: Path) -> str | None:
    """The replay script of the terminal agent's trajectory at ``trajectory``; ``None`` when it is not one autoenv's
    terminal agent wrote, is unreadable, or took no action that changes anything."""
    try:
        data = json.loads(Path(trajectory).read_text())
    except (OSError, ValueError):
        return None
    agent = data.get("agent") or {}
    if agent.get("name") != TERMINAL_AGENT:
        return None
    lines: list[str] = []
    for step in data.get("steps") or []:
        # a call ran when it has a result that is not the "invalid action" feedback (a turn cut short by the time
        # limit records calls it never ran)
        ran = {
            r.get("source_call_id")
            for r in (step.get("observation") or {}).get("results") or []
            if (r.get("extra") or {}).get("error") != "invalid_action"
        }
        for call in step.get("tool_calls") or []:
            if call.get("tool_call_id") not in ran:
                continue
            try:
                action = action_from_tool_call(call.get("function_name", ""), call.get("arguments"))
            except InvalidActionError:
                continue  # the agent was told it was invalid; it ran nothing
            if isinstance(action, FinishAction):
                return _script(trajectory, lines)
            lines += _lines(action)
    return _script(trajectory, lines)


def _script(trajectory: Path, lines: list[str]) -> str | None:
    if not lines:
        return None
    return _HEADER.format(source=Path(trajectory).parent.parent.name) + "\n".join(lines) + "\nexit 0\n"


__all__ = ["TRAJECTORY", "solution_from_trajectory"]

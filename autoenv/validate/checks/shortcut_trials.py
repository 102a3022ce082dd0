"""The shortcut cheats' trials (see :mod:`autoenv.agents.shortcuts`), for the tamper check.

Each shortcut family writes the outputs its own way, so each runs as its own adversary trial, all at once, after
the usual cheats lost (a task the usual cheats beat is rejected already). Only families with something to do for
this instruction run: a task that names no output costs no trial. The ``inputs`` family is told which files the
tests read (:mod:`autoenv.validate.checks.reads`), as a policy that met the tests' failures would learn them.
"""

from __future__ import annotations

from autoenv.agents.adversary import SHORTCUT_FAMILIES, cheat_script
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import Context
from autoenv.validate.checks.reads import agent_inputs

ADVERSARY = "autoenv.agents.adversary:AdversaryAgent"


def applicable(instruction: str, inputs: tuple[str, ...] = ()) -> list[str]:
    """The shortcut families whose script does anything for this instruction."""
    empty = cheat_script(instruction, ())
    return [f for f in SHORTCUT_FAMILIES if cheat_script(instruction, (f,), inputs) != empty]


async def run_shortcuts(ctx: Context) -> dict[str, TrialOutcome]:
    """One adversary trial per applicable shortcut family, by family."""
    instruction = ctx.task.instruction
    inputs = tuple(agent_inputs(ctx))
    families = applicable(instruction, inputs)
    if not families:
        return {}
    jobs = [
        (ADVERSARY, {"cheats": f} | ({"inputs": ",".join(inputs)} if f == "inputs" and inputs else {}))
        for f in families
    ]
    return dict(zip(families, await ctx.run(jobs)))


__all__ = ["applicable", "run_shortcuts"]

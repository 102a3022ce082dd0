"""The task proposer: seed cases, the workspace, and the prompt / feedback / agentic methods.

Importing the package teaches the scripted solver the proposer's task
families (see :mod:`autoenv.proposer.recipes`): whatever process proposes,
calibrates or rolls out these tasks with ``--policy scripted`` imports it
(the flywheel through :mod:`autoenv.proposer.models`, the CLI through its
``propose`` commands), so their rollouts can pass.
"""

from __future__ import annotations


def _install_recipes() -> None:
    try:
        from autoenv.proposer.recipes import install
    except ImportError:  # the agents package is optional for reading seed cases and summaries
        return
    install()


_install_recipes()

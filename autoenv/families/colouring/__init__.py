"""Search levels: tasks whose answer is a clash-free assignment of items to a few classes (a planted colouring).

A capable model follows any written contract at once (bench/README); what it fails sometimes is a search that its
knowledge does not finish: near the density where random graphs stop being colourable, greedy orders need an extra
class and the textbook local searches stall a clash or two short. A level that asks for one (primer-tm's pools)
draws the clashes around a planted assignment, which its reference writes: it proves a sheet exists; finding one is
the solver's work (not every such graph is hard: bench/README's resit timetable, cliques of 3-5 courses per student,
fell to constraint propagation in a few turns). The scripted solver's recipes run one real search for them,
``files/colour_search.py`` (tabu search inside Galinier and Hao's evolutionary algorithm), for a bounded time, and
ship the best sheet it found: at such a level the scripted solver passes only when its search lands.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from autoenv.families.solver import fill_program

#: Where the recipes write the search, and how long it may run (the run's own limit is 120 s): a minute, so that a
#: rollout at a search level costs about what one at the levels below does, not the turns a model spends.
PROGRAM = "/tmp/colour_search.py"
BUDGET_S = 60.0
#: The key a search level's draft parameters carry: the name of the one test a search that did not land fails.
SEARCH = "search"


def search_program(colours: int, header: tuple[str, str], separator: str, **extra: Any) -> str:
    """The search program, writing the sheet with ``header`` and ``separator``; ``extra``: what its reader of the
    clash graph needs (the panel's dG threshold)."""
    params = {"colours": colours, "header": list(header), "separator": separator, "budget_s": BUDGET_S}
    return fill_program(_source(), params | extra)


@functools.cache
def _source() -> str:
    return (Path(__file__).with_name("files") / "colour_search.py").read_text()

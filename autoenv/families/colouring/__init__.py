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
import random
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.colouring import planted
from autoenv.families.solver import Episode, ScriptRecipe, fill_program, first

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

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


def sheet_tests(*, sheet: str, item: str, klass: str, colours: int, items_file: str, clashes_file: str) -> str:
    """The tests of a level whose clashes are plain pairs: ``sheet`` (header ``item<TAB>klass``) gives every line of
    ``items_file`` (beside the tests) one of ``colours`` classes, no pair of ``clashes_file`` (a TSV with a header,
    the pair in its first two columns) in one class. The one test a search that did not land fails is
    :func:`clash_test`."""
    words = {"__SHEET__": sheet, "__ITEMS_FILE__": items_file, "__CLASHES_FILE__": clashes_file, "__K__": str(colours)}
    words |= {"__ITEM__": item, "__CLASS__": klass}
    text = (Path(__file__).with_name("files") / "sheet_tests.py").read_text()
    for word, value in words.items():
        text = text.replace(word, value)
    return text


def clash_test(item: str, klass: str) -> str:
    """The name of :func:`sheet_tests`' clash check."""
    return f"test_no_two_clashing_{item}s_share_a_{klass}"


@dataclass(frozen=True)
class SheetLevel:
    """How the scripted solver recognises a search level whose clashes are plain pairs (in a table or a log) and
    runs the search on it: the phrase that marks its instruction, the files it names, where the sheet goes."""

    marker: str
    inputs: tuple[str, ...]
    source: str  # the folder the search's reader reads its files under
    sheet: str
    header: tuple[str, str]
    colours: str  # a pattern of one group: the number of classes, as the instruction states it
    reader: tuple[tuple[str, Any], ...]  # the reader (``reader``: pairs or log) and its files, for the program

    def match(self, instruction: str, level: int) -> dict[str, Any] | None:
        if self.marker not in instruction or not all(path in instruction for path in self.inputs):
            return None
        return {
            "level": level,
            "sheet_level": True,
            "colours": int(first(self.colours, instruction)),
            "program_path": PROGRAM,
            "inputs": list(self.inputs),
            "outputs": [self.sheet],
        }

    def look(self, params: dict[str, Any]) -> str:
        paths = " ".join(shlex.quote(p) for p in self.inputs)
        return f"wc -l {paths}; head -n 4 {paths}"

    def program(self, params: dict[str, Any]) -> str:
        return search_program(params["colours"], self.header, "\t", **dict(self.reader))

    def run_command(self, params: dict[str, Any]) -> str:
        return f"python3 {PROGRAM} {self.source} {self.sheet}"


class SheetSearch:
    """A recipe mixin (before the recipe's base class): its family's search level (``sheet_level``) is recognised
    and solved by :class:`SheetLevel`'s steps (look at the files, write the search, run it, check the sheet), every
    other level by the recipe."""

    sheet_level: SheetLevel
    name: str

    def match(self, instruction: str) -> dict[str, Any] | None:
        found = self.sheet_level.match(instruction, self.level_of(instruction))  # type: ignore[attr-defined]
        return found if found is not None else super().match(instruction)  # type: ignore[misc]

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        if found.get("sheet_level"):
            return _SheetSteps(self.name, self.sheet_level).solve(instruction, found)
        return super().solve(instruction, found)  # type: ignore[misc]


class _SheetSteps(ScriptRecipe):
    """A script recipe's steps with a search level's look, program and command."""

    def __init__(self, name: str, level: SheetLevel) -> None:
        self.name, self.level = name, level

    def look(self, params: dict[str, Any]) -> str:
        return self.level.look(params)

    def program(self, params: dict[str, Any]) -> str:
        return self.level.program(params)

    def run_command(self, params: dict[str, Any]) -> str:
        return self.level.run_command(params)


def sheet_draft(
    case: SeedCase,
    rng: random.Random,
    *,
    family: str,
    level: SheetLevel,
    colours: int,
    assignment: dict[str, int],
    instruction: str,
    data: dict[str, str],
    items: tuple[str, str],
    clashes: tuple[str, str],
    category: str,
    tags: list[str],
    params: dict[str, Any],
) -> TaskDraft:
    """The task of a level whose clashes are plain pairs: ``data`` (paths under /app) in the image; the tests
    (:func:`sheet_tests`) with their own copy of the items and the clashing pairs (``items``, ``clashes``: a file
    name and its text each); the reference writing the planted ``assignment``; an hour for the agent (as measured:
    30 turns, some of them 120 s searches, fit an hour)."""
    item, klass = level.header
    (items_file, items_text), (clashes_file, clashes_text) = items, clashes
    tests = sheet_tests(
        sheet=level.sheet, item=item, klass=klass, colours=colours, items_file=items_file, clashes_file=clashes_file
    )
    sheet = planted.sheet(level.header, assignment)
    files = task_files(
        case,
        family,
        category,
        tags,
        instruction,
        solve_sh(f"cat > {level.sheet} <<'PLAN'\n{sheet}PLAN"),
        tests,
        app=data,
        hidden={items_file: items_text, clashes_file: clashes_text},
        difficulty="hard",
        agent_timeout=3600.0,
        verifier_timeout=120.0,
    )
    params = params | {
        "leak_hint": None,
        "stale_output": [(level.sheet.removeprefix("/app/"), sheet)],
        "output_path": level.sheet,
        SEARCH: clash_test(item, klass),
    }
    return TaskDraft(name=task_name(family, rng, klass + "s"), family=family, files=files, params=params)

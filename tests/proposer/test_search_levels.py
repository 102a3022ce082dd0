"""The search levels (issue 42: primer-tm's pools, level 5; config-repair's maintenance windows and log-parse's
batch-job slots, level 7): each asks for a clash-free assignment that a
planted one proves possible, that a greedy order does not finish, that the tests check by the instruction's rules
only, and that the scripted solver's recipe really searches for. Read without a sandbox;
tests/proposer/test_ladders.py validates each level for real (oracle, nop, partial, tamper) and runs the scripted
solver on it."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.colouring import SEARCH
from autoenv.families.config_repair import windows
from autoenv.families.log_parse import lock_slots
from autoenv.families.primer_tm import pools
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase


def checker(task: Path, sheet: Path, path: str) -> dict:
    """The task's own test module, reading ``sheet`` instead of ``path`` (its data files beside it)."""
    source = (task / "tests" / "test_outputs.py").read_text().replace(repr(path).replace("'", '"'), repr(str(sheet)))
    scope = {"__file__": str(task / "tests" / "test_outputs.py"), "__name__": "level_tests"}
    exec(compile(source, "test_outputs.py", "exec"), scope)  # noqa: S102 - the task's own tests
    return scope


def panel_graph(tests: dict) -> dict[str, set[str]]:
    amplicons = [(n, c, int(s), int(e), f, r) for n, c, s, e, f, r in tests["table"]("amplicons.tsv")]
    dimers = [(a, b, float(g)) for a, b, g in tests["table"]("dimers.tsv")]
    adj: dict[str, set[str]] = {a[0]: set() for a in amplicons}
    for pair in tests["clashes"](amplicons, dimers):
        a, b = tuple(pair)
        adj[a] |= {b}
        adj[b] |= {a}
    return adj


def pairs_graph(items_file: str) -> Callable[[dict], dict[str, set[str]]]:
    """The clash graph of a level whose tests hold the items (``items_file``) and the clashing pairs."""

    def graph(tests: dict) -> dict[str, set[str]]:
        adj: dict[str, set[str]] = {item: set() for item in (tests["HERE"] / items_file).read_text().split()}
        for pair in tests["clashes"]():
            a, b = tuple(pair)
            adj[a] |= {b}
            adj[b] |= {a}
        return adj

    return graph


@dataclass(frozen=True)
class SearchLevel:
    family: str
    level: int
    sheet: str  # the path the task asks for
    header: tuple[str, str]
    separator: str
    colours: int
    items: int
    graph: Callable[[dict], dict[str, set[str]]]
    heredoc: str  # the reference's heredoc word: the planted sheet is between its lines
    generate: Callable[..., object]  # the level's generator: (case, rng, *, family, n)


LEVELS = {
    "primer-tm-5": SearchLevel(
        family="primer-tm",
        level=5,
        sheet=pools.SHEET,
        header=("amplicon", "pool"),
        separator="\t",
        colours=pools.POOLS,
        items=pools.AMPLICONS,
        graph=panel_graph,
        heredoc="SHEET",
        generate=pools.generate,
    ),
    "config-repair-7": SearchLevel(
        family="config-repair",
        level=7,
        sheet=windows.PLAN,
        header=windows.HEADER,
        separator="\t",
        colours=windows.WINDOWS,
        items=windows.SERVICES,
        graph=pairs_graph("services.txt"),
        heredoc="PLAN",
        generate=windows.generate,
    ),
    "log-parse-7": SearchLevel(
        family="log-parse",
        level=7,
        sheet=lock_slots.SCHEDULE,
        header=lock_slots.HEADER,
        separator="\t",
        colours=lock_slots.SLOTS,
        items=lock_slots.JOBS,
        graph=pairs_graph("jobs.txt"),
        heredoc="PLAN",
        generate=lock_slots.generate,
    ),
}


def case(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def planted(draft, spec: SearchLevel) -> dict[str, str]:
    text = draft.files["solution/solve.sh"].split(f"<<'{spec.heredoc}'\n", 1)[1].rsplit(spec.heredoc, 1)[0]
    return dict(line.split(spec.separator) for line in text.splitlines()[1:])


def write(path: Path, spec: SearchLevel, rows: dict[str, str]) -> Path:
    sep = spec.separator
    path.write_text(sep.join(spec.header) + "\n" + "".join(f"{k}{sep}{v}\n" for k, v in rows.items()))
    return path


def run_tests(task: Path, spec: SearchLevel, sheet: Path) -> None:
    tests = checker(task, sheet, spec.sheet)
    for name, test in tests.items():
        if name.startswith("test_"):
            test()


def dsatur(adj: dict[str, set[str]]) -> int:
    """How many classes a greedy order needs: the item with the most differently coloured neighbours next."""
    colour: dict[str, int] = {}
    while len(colour) < len(adj):
        v = max(
            (v for v in adj if v not in colour),
            key=lambda v: (len({colour[u] for u in adj[v] if u in colour}), len(adj[v])),
        )
        taken = {colour[u] for u in adj[v] if u in colour}
        colour[v] = next(k for k in range(len(adj)) if k not in taken)
    return max(colour.values()) + 1


@pytest.fixture(scope="module", params=sorted(LEVELS))
def level_task(request, tmp_path_factory):
    spec = LEVELS[request.param]
    draft = FAMILIES[spec.family].draft(case(spec.family), random.Random(3), level=spec.level)
    return spec, draft, draft.write(tmp_path_factory.mktemp(request.param))


def test_the_planted_sheet_fits_and_a_greedy_order_does_not(level_task, tmp_path):
    spec, draft, task = level_task
    assert draft.params[SEARCH].startswith("test_")
    adj = spec.graph(checker(task, tmp_path / "unused", spec.sheet))
    assert len(adj) == spec.items
    run_tests(task, spec, write(tmp_path / "planted", spec, planted(draft, spec)))
    assert dsatur(adj) > spec.colours, "a greedy order fits: no search is needed"


def test_the_tests_hold_the_instructions_rules_and_nothing_else(level_task, tmp_path):
    spec, draft, task = level_task
    sheet = planted(draft, spec)
    adj = spec.graph(checker(task, tmp_path / "unused", spec.sheet))
    a = next(v for v in adj if adj[v])
    b = next(iter(adj[a]))
    klass = spec.header[1]
    cases = {
        "moved-next-to-a-clash": ({**sheet, a: sheet[b]}, f"share a {klass}"),
        "one-left-out": ({k: v for k, v in sheet.items() if k != a}, f"have no {klass}"),
        "one-class-too-many": ({**sheet, a: str(spec.colours + 1)}, f"is not one of 1-{spec.colours}"),
    }
    for what, (rows, says) in cases.items():
        with pytest.raises(AssertionError, match=says):
            run_tests(task, spec, write(tmp_path / what, spec, rows))
    # any other sheet that keeps the rules passes: the classes renumbered, the rows in another order
    renumbered = {k: str(spec.colours + 1 - int(sheet[k])) for k in sorted(sheet, reverse=True)}
    run_tests(task, spec, write(tmp_path / "renumbered", spec, renumbered))


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_the_scripted_solvers_search_finds_a_sheet_where_one_is_within_its_reach(name, tmp_path):
    """The recipe's program, run for real on a small instance of the level: a sheet the task's tests accept."""
    spec = LEVELS[name]
    draft = spec.generate(case(spec.family), random.Random("small"), family=spec.family, n=150)
    task = draft.write(tmp_path)
    recipe, found = match_recipe(draft.files["instruction.md"])
    assert recipe is FAMILIES[spec.family].recipe
    steps = recipe.sheet_level if found.get("sheet_level") else recipe  # a level of plain pairs: colouring's steps
    program = tmp_path / "colour_search.py"
    program.write_text(steps.program(found))
    source = steps.run_command(found).split()[-2].replace("/app/", "environment/app/")
    sheet = tmp_path / "sheet"
    run = subprocess.run(
        [sys.executable, "-I", str(program), str(task / source), str(sheet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and '"clashes_left": 0' in run.stdout, run.stdout + run.stderr
    run_tests(task, spec, sheet)


def test_the_logs_clashes_are_the_pairs_the_tests_hold(tmp_path):
    """log-parse's level 7: the pairs its tests hold are exactly the clashes its log records as the instruction
    words them (a lock wait on a job, a deadlock between two), read here word by word, not by the solver's regexes;
    the log's other lines (waits on the database's processes, starts, finishes, checkpoints) name no pair."""
    draft = FAMILIES["log-parse"].draft(case("log-parse"), random.Random(5), level=7)
    jobs = set(draft.files["tests/jobs.txt"].split())
    held: set[frozenset[str]] = set()
    kinds: set[str] = set()
    for line in draft.files["environment/app/logs/db.log"].splitlines():
        words = line.split()
        event = words[words.index("UTC") + 2 :]  # after the timestamp, the zone and the process id
        if event[:1] == ["LOG:"] and "waited" in event and event[-2] == "job":
            kinds.add("wait")
            held.add(frozenset((event[2], event[-1])))
        elif event[:3] == ["ERROR:", "deadlock", "detected"]:
            kinds.add("deadlock")
            held.add(frozenset((event[5], event[8].rstrip(";"))))
        else:
            assert "held by job" not in line and "deadlock" not in line, line
    pairs = {frozenset(line.split("\t")) for line in draft.files["tests/clashes.tsv"].splitlines()[1:]}
    assert kinds == {"wait", "deadlock"} and held == pairs and set().union(*pairs) <= jobs
    assert "held by autovacuum" in draft.files["environment/app/logs/db.log"], "waits on the database's processes"

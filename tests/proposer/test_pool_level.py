"""primer-tm level 5 (issue 42): split a multiplex panel into the kit's pools, a search that the panel's planted
sheet proves possible, that a greedy order does not finish, that the tests check by the instruction's two rules
only, and that the scripted solver's recipe really searches. Read without a sandbox; tests/proposer/test_ladders.py
validates the level for real (oracle, nop, partial, tamper) and runs the scripted solver on it."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.primer_tm import pools
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase

CASE = SeedCase(id="t-primer-tm", task="t", failure_mode="t", target_skill="t", family="primer-tm")


def checker(task: Path, sheet: Path) -> dict:
    """The task's own test module, reading ``sheet`` instead of /app/pools.tsv (its two tables beside it)."""
    source = (task / "tests" / "test_outputs.py").read_text().replace('"/app/pools.tsv"', repr(str(sheet)))
    scope = {"__file__": str(task / "tests" / "test_outputs.py"), "__name__": "pool_tests"}
    exec(compile(source, "test_outputs.py", "exec"), scope)  # noqa: S102 - the task's own tests
    return scope


def graph(task: Path) -> dict[str, set[str]]:
    tests = checker(task, task / "unused")
    amplicons = [(n, c, int(s), int(e), f, r) for n, c, s, e, f, r in tests["table"]("amplicons.tsv")]
    dimers = [(a, b, float(g)) for a, b, g in tests["table"]("dimers.tsv")]
    adj: dict[str, set[str]] = {a[0]: set() for a in amplicons}
    for pair in tests["clashes"](amplicons, dimers):
        a, b = tuple(pair)
        adj[a].add(b)
        adj[b].add(a)
    return adj


def dsatur(adj: dict[str, set[str]]) -> int:
    """How many pools a greedy order needs: the amplicon with the most differently pooled neighbours next."""
    pool: dict[str, int] = {}
    while len(pool) < len(adj):
        v = max(
            (v for v in adj if v not in pool), key=lambda v: (len({pool[u] for u in adj[v] if u in pool}), len(adj[v]))
        )
        taken = {pool[u] for u in adj[v] if u in pool}
        pool[v] = next(k for k in range(len(adj)) if k not in taken)
    return max(pool.values()) + 1


@pytest.fixture(scope="module")
def level_task(tmp_path_factory) -> tuple[Path, object]:
    draft = FAMILIES["primer-tm"].draft(CASE, random.Random(3), level=5)
    return draft.write(tmp_path_factory.mktemp("pools")), draft


def test_the_planted_sheet_fits_and_a_greedy_order_does_not(level_task, tmp_path):
    task, draft = level_task
    adj = graph(task)
    assert len(adj) == pools.AMPLICONS
    mean_degree = sum(map(len, adj.values())) / len(adj)
    assert pools.DEGREE - 0.1 < mean_degree <= pools.DEGREE + 0.01, mean_degree
    planted = task / "planted.tsv"
    planted.write_text(draft.files["solution/solve.sh"].split("<<'SHEET'\n", 1)[1].rsplit("SHEET", 1)[0])
    tests = checker(task, planted)
    tests["test_every_amplicon_is_in_one_of_the_kits_pools"]()
    tests["test_no_pool_holds_two_amplicons_that_clash"]()
    assert dsatur(adj) > pools.POOLS, "a greedy order fits the panel: no search is needed"


def test_the_tests_hold_the_instructions_two_rules_and_nothing_else(level_task, tmp_path):
    task, draft = level_task
    lines = draft.files["solution/solve.sh"].split("<<'SHEET'\n", 1)[1].rsplit("SHEET", 1)[0].splitlines()
    sheet = dict(line.split("\t") for line in lines[1:])
    adj = graph(task)
    a = next(v for v in adj if adj[v])
    b = next(iter(adj[a]))
    cases = {
        "moved into a clashing neighbour's pool": ({**sheet, a: sheet[b]}, "share a pool"),
        "one amplicon left out": ({k: v for k, v in sheet.items() if k != a}, "have no pool"),
        "a fifth pool": ({**sheet, a: "5"}, "is not one of 1-4"),
    }
    for what, (rows, says) in cases.items():
        path = tmp_path / f"{what.replace(' ', '-')}.tsv"
        path.write_text("amplicon\tpool\n" + "".join(f"{k}\t{v}\n" for k, v in rows.items()))
        tests = checker(task, path)
        with pytest.raises(AssertionError, match=says):
            tests["test_every_amplicon_is_in_one_of_the_kits_pools"]()
            tests["test_no_pool_holds_two_amplicons_that_clash"]()
    # any other sheet that keeps the rules passes: the pools renumbered, rows in another order, CRLF-free as told
    renumbered = {k: str(5 - int(v)) for k, v in sheet.items()}
    path = tmp_path / "renumbered.tsv"
    path.write_text("amplicon\tpool\n" + "".join(f"{k}\t{renumbered[k]}\n" for k in sorted(renumbered, reverse=True)))
    tests = checker(task, path)
    tests["test_every_amplicon_is_in_one_of_the_kits_pools"]()
    tests["test_no_pool_holds_two_amplicons_that_clash"]()


def test_the_scripted_solvers_search_finds_a_sheet_where_one_is_within_its_reach(tmp_path):
    """The recipe's program, run for real on a small panel of the level's density: a sheet the task's tests accept."""
    draft = pools.generate(CASE, random.Random("small"), family="primer-tm", n=150)
    task = draft.write(tmp_path)
    recipe, found = match_recipe(draft.files["instruction.md"])
    assert recipe is FAMILIES["primer-tm"].recipe and found["pools"] == 4 and found["threshold"] == -9.0
    program = tmp_path / "pool_search.py"
    program.write_text(recipe.program(found))
    sheet = tmp_path / "pools.tsv"
    run = subprocess.run(
        [sys.executable, "-I", str(program), str(task / "environment/app/panel"), str(sheet)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0 and '"clashes_left": 0' in run.stdout, run.stdout + run.stderr
    tests = checker(task, sheet)
    tests["test_every_amplicon_is_in_one_of_the_kits_pools"]()
    tests["test_no_pool_holds_two_amplicons_that_clash"]()

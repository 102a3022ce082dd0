"""Split a multiplex PCR panel into the kit's pools (an experiment, not a level): can a search problem whose answer
the solver checks for itself, but whose answer is hard to find, make a task hard for a capable model?

bench/README's "a capable model splitting a panel into pools" measured a capable model on these tasks. The image
holds `/app/panel/amplicons.tsv` (600 amplicons tiling regions of 8 chromosomes) and `/app/panel/dimers.tsv` (the
dimer screen: primer pairs with their dG); two amplicons may share a pool only if their regions do not overlap and
no primer pair between them is at or below -9.0 kcal/mol. The panel fits the kit's 4 pools: the generator
(`bench/pool_plan/gen.py`) planted an assignment and drew every clash between amplicons of different planted pools,
at the density where greedy colouring needs a fifth pool and plain tabu search in Python needs minutes. The tests
check `/app/pools.tsv` against their own copy of the two tables. The reference solution writes the planted sheet
(solving it is the solver's job; the reference shows the sheet exists). Check a written task with
``autoenv validate DIR``.

Run: .venv/bin/python bench/pool_plan_task.py [--tasks N] [--amplicons N] [--degree D] [--out DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.base import dockerfile, pytest_test_sh, solve_sh, task_toml, write_files  # noqa: E402
from autoenv.grading import AGENTCALL  # noqa: E402
from bench.pool_plan.gen import THRESHOLD, amplicons_tsv, dimers_tsv, panel  # noqa: E402

HERE = Path(__file__).resolve().parent / "pool_plan"
INSTRUCTION = """\
# Split the panel into the kit's pools

The lab's multiplex PCR panel, {n} amplicons listed in `/app/panel/amplicons.tsv` (name, chromosome, start, end,
forward and reverse primer), has to run in the kit's **{pools} pool tubes**. Two amplicons may share a pool only if
both of these hold:

- their regions do not overlap: on the same chromosome, the intervals `[start, end)` (0-based, end excluded, as in
  the table) have no base in common;
- no primer of one forms a dimer with a primer of the other at a dG of **{threshold} kcal/mol or below**, according
  to the dimer screen in `/app/panel/dimers.tsv` (one primer pair per row, in either order, with its dG; a pair that
  is not listed forms no dimer).

Nothing else counts: pools may hold different numbers of amplicons. When the panel was designed it did run in {pools}
pools, so it can be done, but that pool sheet is lost. Write the new one as `/app/pools.tsv`: a header line
`amplicon<TAB>pool`, then one line per amplicon with its name and its pool, a number from 1 to {pools}, every
amplicon of the panel exactly once. The tests check the sheet against the two tables and the two rules above. This
machine has Python 3.12 (standard library only) and one CPU; nothing can be installed.
"""


def pool_plan(seed: str, out: Path, n: int = 600, degree: float = 8.6) -> Path:
    """The task of draw ``seed`` in ``out`` (replaced if it exists)."""
    shutil.rmtree(out, ignore_errors=True)
    p = panel(seed, n=n, degree=degree)
    amplicons, dimers = amplicons_tsv(p), dimers_tsv(p)  # the image's tables and the tests' copy
    sheet = "amplicon\tpool\n" + "".join(f"{a.name}\t{p.planted[a.name]}\n" for a in p.amplicons)
    tests = (
        (HERE / "test_outputs.py")
        .read_text()
        .replace("__POOLS__", str(p.pools))
        .replace("__THRESHOLD__", str(THRESHOLD))
    )
    files: dict[str, str | bytes] = {
        "instruction.md": INSTRUCTION.format(n=n, pools=p.pools, threshold=THRESHOLD),
        "task.toml": task_toml(
            family="primer-tm",
            seed_case="bench",
            category="scientific-computing",
            tags=["python", "bioinformatics", "search"],
            difficulty="hard",
            agent_timeout=3600.0,
            verifier_timeout=120.0,
        ),  # fmt: skip
        "environment/Dockerfile": dockerfile(),
        "environment/app/panel/amplicons.tsv": amplicons,
        "environment/app/panel/dimers.tsv": dimers,
        "solution/solve.sh": solve_sh(f"cat > /app/pools.tsv <<'SHEET'\n{sheet}SHEET"),
        "tests/test.sh": pytest_test_sh("amplicons.tsv", "dimers.tsv"),
        "tests/test_outputs.py": tests,
        "tests/agentcall.py": AGENTCALL,
        "tests/amplicons.tsv": amplicons,
        "tests/dimers.tsv": dimers,
    }
    write_files(out, files, executable={"solution/solve.sh", "tests/test.sh"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="draws pool-plan-0 .. N-1")
    parser.add_argument("--amplicons", type=int, default=600)
    parser.add_argument("--degree", type=float, default=8.6, help="mean number of clashes per amplicon")
    parser.add_argument("--out", type=Path, default=Path("runs/pool-plan"))
    args = parser.parse_args()
    for k in range(args.tasks):
        print(pool_plan(str(k), args.out / f"pool-plan-{k}", args.amplicons, args.degree))


if __name__ == "__main__":
    main()

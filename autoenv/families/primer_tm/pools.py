"""primer-tm level 5: split a multiplex PCR panel into the kit's pools, a search the solver can check but not easily
finish.

Every level below asks for a formula followed exactly, which a capable model does at once (bench/README). This level
asks for what its knowledge does not guarantee: the image holds the panel (``/app/panel/amplicons.tsv``, amplicons
tiling 8 chromosomes) and the dimer screen (``/app/panel/dimers.tsv``, primer pairs with their dG); two amplicons may
share one of the kit's 4 pools only if their regions do not overlap and no primer pair between them is at or below
-9.0 kcal/mol. The panel fits: :func:`panel` planted an assignment and drew every clash between amplicons of
different planted pools, at a density just under where random graphs stop being 4-colourable, where a greedy order
(DSatur) needs a fifth pool and the textbook searches (TabuCol, Galinier and Hao's evolutionary algorithm) stall a
clash or two short for minutes. The tests check ``/app/pools.tsv`` against their own copy of the two tables and the
two rules, nothing else (``files/pool_tests.py``).

The reference solution writes the planted sheet: it proves the sheet exists; finding one is the solver's work. The
scripted solver's recipe runs :mod:`autoenv.families.colouring`'s search for a minute and ships the best sheet it
found, so it passes this level only when its search lands, as a model does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.colouring import SEARCH

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

CHROMS = ("chr1", "chr2", "chr3", "chr7", "chr11", "chr12", "chr17", "chrX")
THRESHOLD = -9.0
POOLS = 4
#: The level's panel: 800 amplicons at 8.8 clashes per amplicon (bench/README: a capable model on this level).
AMPLICONS = 800
DEGREE = 8.8
SHEET = "/app/pools.tsv"
#: What marks the level's instruction (the scripted solver's recipe reads the level from it).
MARKER = "pool tubes"
FILES = Path(__file__).with_name("files")

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


@dataclass(frozen=True)
class Amplicon:
    name: str
    chrom: str
    start: int
    end: int

    @property
    def primers(self) -> tuple[str, str]:
        return f"{self.name}_F", f"{self.name}_R"


@dataclass(frozen=True)
class Panel:
    amplicons: list[Amplicon]
    dimers: list[tuple[str, str, float]]  # primer, primer, dG (kcal/mol)
    planted: dict[str, int]  # amplicon -> pool, 1-based
    pools: int


def panel(rng: random.Random, n: int = AMPLICONS, pools: int = POOLS, degree: float = DEGREE) -> Panel:
    """A panel of ``n`` amplicons that fits ``pools`` pools by a planted assignment, ``degree`` clashes per amplicon.

    Amplicons tile regions of the chromosomes; consecutive ones overlap or leave a gap at random, and overlapping
    ones got different planted pools. The dimer screen then lists primer pairs that clash, all between amplicons of
    different planted pools, drawn uniformly among such pairs until the clash graph has the mean degree, and as many
    harmless pairs (dG above the threshold) between any amplicons, one row per primer pair. Names are shuffled, so
    a name says nothing of a neighbour."""
    amplicons: list[Amplicon] = []
    pool: list[int] = []
    edges: set[tuple[int, int]] = set()
    overlapping: set[tuple[int, int]] = set()  # neighbours whose regions overlap: a clash without any dimer row
    per_chrom = [n // len(CHROMS) + (1 if i < n % len(CHROMS) else 0) for i in range(len(CHROMS))]
    for chrom, count in zip(CHROMS, per_chrom):
        pos = rng.randrange(1_000_000, 90_000_000)
        for k in range(count):
            i = len(amplicons)
            length = rng.randrange(180, 320)
            overlaps = k > 0 and rng.random() < 0.55
            start = amplicons[-1].end - rng.randrange(20, 60) if overlaps else pos + rng.randrange(150, 5000)
            amplicons.append(Amplicon(f"AMP{i:04d}", chrom, start, start + length))
            pos = start + length
            if overlaps:
                pool.append(rng.choice([p for p in range(pools) if p != pool[-1]]))
                overlapping.add((i - 1, i))
                edges.add((i - 1, i))
            else:
                pool.append(rng.randrange(pools))
    order = list(range(n))
    rng.shuffle(order)
    renamed = [Amplicon(f"AMP{order[i] + 1:04d}", a.chrom, a.start, a.end) for i, a in enumerate(amplicons)]
    target = int(degree * n / 2)
    while len(edges) < target:
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b and pool[a] != pool[b]:
            edges.add((min(a, b), max(a, b)))
    dimers: list[tuple[str, str, float]] = []
    for a, b in edges:
        if (a, b) in overlapping and rng.random() < 0.8:
            continue  # most overlapping neighbours clash only by overlapping
        pa, pb = rng.choice(renamed[a].primers), rng.choice(renamed[b].primers)
        dimers.append((pa, pb, round(rng.uniform(-14.5, THRESHOLD), 1)))
    listed = {frozenset((pa, pb)) for pa, pb, _g in dimers}
    for _ in range(len(dimers)):
        a, b = rng.sample(range(n), 2)
        pa, pb = rng.choice(renamed[a].primers), rng.choice(renamed[b].primers)
        g = round(rng.uniform(THRESHOLD + 0.1, -5.0), 1)
        if frozenset((pa, pb)) not in listed:  # one row per primer pair: the screen gives each pair one dG
            listed.add(frozenset((pa, pb)))
            dimers.append((pa, pb, g))
    rng.shuffle(dimers)
    dimers = [(b, a, g) if rng.random() < 0.5 else (a, b, g) for a, b, g in dimers]
    table = sorted(renamed, key=lambda a: (CHROMS.index(a.chrom), a.start))
    return Panel(table, dimers, {renamed[i].name: pool[i] + 1 for i in range(n)}, pools)


def amplicons_tsv(p: Panel) -> str:
    rows = [f"{a.name}\t{a.chrom}\t{a.start}\t{a.end}\t{a.primers[0]}\t{a.primers[1]}" for a in p.amplicons]
    return "amplicon\tchrom\tstart\tend\tforward\treverse\n" + "\n".join(rows) + "\n"


def dimers_tsv(p: Panel) -> str:
    return "primer_a\tprimer_b\tdG_kcal_mol\n" + "".join(f"{a}\t{b}\t{g:.1f}\n" for a, b, g in p.dimers)


def sheet_tsv(p: Panel) -> str:
    """The planted pool sheet, as the task asks for it."""
    return "amplicon\tpool\n" + "".join(f"{a.name}\t{p.planted[a.name]}\n" for a in p.amplicons)


def generate(
    case: SeedCase, rng: random.Random, *, family: str, n: int = AMPLICONS, degree: float = DEGREE
) -> TaskDraft:
    """The level's task for ``rng``'s draw (``n`` and ``degree`` other than the level's: bench experiments)."""
    p = panel(rng, n=n, degree=degree)
    amplicons, dimers = amplicons_tsv(p), dimers_tsv(p)  # the image's tables and the tests' copy
    sheet = sheet_tsv(p)
    tests = (
        (FILES / "pool_tests.py")
        .read_text()
        .replace("__POOLS__", str(p.pools))
        .replace("__THRESHOLD__", str(THRESHOLD))
    )
    files = task_files(
        case,
        family,
        "scientific-computing",
        ["bioinformatics", "pcr", "python", "search"],
        INSTRUCTION.format(n=n, pools=p.pools, threshold=THRESHOLD),
        solve_sh(f"cat > {SHEET} <<'SHEET'\n{sheet}SHEET"),
        tests,
        app={"panel/amplicons.tsv": amplicons, "panel/dimers.tsv": dimers},
        hidden={"amplicons.tsv": amplicons, "dimers.tsv": dimers},
        difficulty="hard",
        agent_timeout=3600.0,  # as measured (bench/README): 30 turns, some of them 120 s searches, fit an hour
        verifier_timeout=120.0,
    )
    params: dict[str, Any] = {
        "amplicons": n,
        "degree": degree,
        "pools": p.pools,
        "leak_hint": None,
        "stale_output": [("pools.tsv", sheet)],
        "output_path": SHEET,
        SEARCH: "test_no_pool_holds_two_amplicons_that_clash",  # the one test a search that did not land fails
    }
    return TaskDraft(name=task_name(family, rng, "pools"), family=family, files=files, params=params)

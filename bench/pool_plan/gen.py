"""A multiplex PCR panel that fits the kit's pools, by a planted assignment only the generator knows.

Amplicons tile regions of a few chromosomes; consecutive amplicons of a region overlap or leave a gap at random, and
overlapping ones got different pools when the panel was first run. The dimer screen's table then lists the primer
pairs that clash (dG at or below the protocol's threshold), all between amplicons of different planted pools, drawn
uniformly among such pairs until the panel's clash graph has the drawn mean degree, and as many harmless pairs (dG
above the threshold) between any amplicons, one row per primer pair. A planted colouring of that density (8.6 clashes
per amplicon, just under where random graphs stop being 4-colourable) is where a greedy order (DSatur) needs a fifth
pool and plain tabu search in Python solved 450 amplicons in half a minute but still had 5 clashes left after ten
minutes at 600 (measured before the experiment; bench/README has what the players did).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CHROMS = ("chr1", "chr2", "chr3", "chr7", "chr11", "chr12", "chr17", "chrX")
THRESHOLD = -9.0


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


def panel(seed: str, n: int = 600, pools: int = 4, degree: float = 8.6) -> Panel:
    rng = random.Random(f"pool-plan:{seed}")
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
    # amplicon names carry no order: renumber at random so that a name says nothing of a neighbour
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

"""The pool sheet: every amplicon of the panel in exactly one of the kit's pools, and no two amplicons in one pool
that overlap or whose primers form a dimer at or below the threshold (the tests' own copy of the two tables)."""

import csv
import os
import stat
from pathlib import Path

HERE = Path(__file__).parent
POOLS = int("__POOLS__")
THRESHOLD = float("__THRESHOLD__")
SHEET = "/app/pools.tsv"


def table(name):
    with open(HERE / name, newline="") as fh:
        return list(csv.reader(fh, delimiter="\t"))[1:]


def clashes(amplicons: list[tuple[str, str, int, int, str, str]], dimers: list[tuple[str, str, float]]) -> set:
    """The pairs of amplicon names that may not share a pool, from the two tables as the instruction states it:
    regions that overlap (same chromosome, half-open [start, end) intervals that intersect) or a primer pair
    whose dG is at or below the threshold."""
    owner = {}
    for name, _c, _s, _e, f, r in amplicons:
        owner[f] = owner[r] = name
    out = set()
    by_chrom: dict[str, list] = {}
    for name, chrom, start, end, _f, _r in amplicons:
        by_chrom.setdefault(chrom, []).append((start, end, name))
    for rows in by_chrom.values():
        rows.sort()
        for i, (_s, e, name) in enumerate(rows):
            for s2, _e2, other in rows[i + 1 :]:
                if s2 >= e:
                    break
                out.add(frozenset((name, other)))
    for a, b, g in dimers:
        if g <= THRESHOLD and owner[a] != owner[b]:
            out.add(frozenset((owner[a], owner[b])))
    return out


def sheet():
    """The pool sheet's rows after its header; a link or anything but a plain file is no sheet."""
    try:
        fd = os.open(SHEET, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise AssertionError(f"{SHEET} does not exist") from None
    with os.fdopen(fd, "rb") as fh:
        assert stat.S_ISREG(os.fstat(fh.fileno()).st_mode), f"{SHEET} is not a plain file"
        lines = fh.read(1_000_000).decode("utf-8").splitlines()
    header = lines[0].split("\t") if lines else None
    assert header == ["amplicon", "pool"], f"the header is {lines[:1]!r}, not 'amplicon<TAB>pool'"
    return [line.split("\t") for line in lines[1:] if line.strip()]


def assignment():
    amplicons = [row[0] for row in table("amplicons.tsv")]
    known, numbers = set(amplicons), {str(p) for p in range(1, POOLS + 1)}
    pools = {}
    for row in sheet():
        assert len(row) == 2, f"a line of {SHEET} is not two tab-separated fields: {row!r}"
        name, pool = row
        assert name in known, f"{name!r} is not an amplicon of the panel"
        assert name not in pools, f"{name} is listed twice"
        assert pool in numbers, f"{name}: pool {pool!r} is not one of 1-{POOLS}"
        pools[name] = int(pool)
    missing = [a for a in amplicons if a not in pools]
    assert not missing, f"{len(missing)} amplicons have no pool, e.g. {missing[:5]}"
    return pools


def test_every_amplicon_is_in_one_of_the_kits_pools():
    assignment()


def test_no_pool_holds_two_amplicons_that_clash():
    pools = assignment()
    amplicons = [(n, c, int(s), int(e), f, r) for n, c, s, e, f, r in table("amplicons.tsv")]
    dimers = [(a, b, float(g)) for a, b, g in table("dimers.tsv")]
    bad = sorted(tuple(sorted(pair)) for pair in clashes(amplicons, dimers) if len({pools[x] for x in pair}) == 1)
    assert not bad, f"{len(bad)} pairs of clashing amplicons share a pool, e.g. {bad[:5]}"

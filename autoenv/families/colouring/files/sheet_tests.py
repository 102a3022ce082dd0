"""The sheet: every __ITEM__ of __ITEMS_FILE__ in exactly one of the __K__ __CLASS__s, and no two __ITEM__s that
clash in one __CLASS__ (the tests' own copy of the list and of the clashing pairs)."""

import csv
import os
import stat
from pathlib import Path

HERE = Path(__file__).parent
K = int("__K__")
SHEET = "__SHEET__"
HEADER = ["__ITEM__", "__CLASS__"]


def sheet():
    try:
        fd = os.open(SHEET, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise AssertionError(f"{SHEET} does not exist") from None
    with os.fdopen(fd, "rb") as fh:
        assert stat.S_ISREG(os.fstat(fh.fileno()).st_mode), f"{SHEET} is not a plain file"
        lines = fh.read(1_000_000).decode("utf-8").splitlines()
    assert lines and lines[0].split("\t") == HEADER, f"the header is {lines[:1]!r}, not {chr(9).join(HEADER)!r}"
    items = (HERE / "__ITEMS_FILE__").read_text().split()
    known, numbers, assigned = set(items), {str(k) for k in range(1, K + 1)}, {}
    for line in lines[1:]:
        if not line.strip():
            continue
        row = line.split("\t")
        assert len(row) == 2, f"not two tab-separated fields: {row!r}"
        name, k = row
        assert name in known, f"{name!r} is not a __ITEM__ of __ITEMS_FILE__"
        assert name not in assigned, f"{name} is listed twice"
        assert k in numbers, f"{name}: __CLASS__ {k!r} is not one of 1-{K}"
        assigned[name] = int(k)
    missing = [item for item in items if item not in assigned]
    assert not missing, f"{len(missing)} __ITEM__s have no __CLASS__, e.g. {missing[:5]}"
    return assigned


def clashes():
    """The pairs that may not share a __CLASS__, either way round."""
    with open(HERE / "__CLASHES_FILE__", newline="") as fh:
        return {frozenset(row[:2]) for row in list(csv.reader(fh, delimiter="\t"))[1:] if row[0] != row[1]}


def test_every___ITEM___has_one___CLASS__():
    sheet()


def test_no_two_clashing___ITEM__s_share_a___CLASS__():
    assigned = sheet()
    bad = sorted(sorted(pair) for pair in clashes() if len({assigned[item] for item in pair}) == 1)
    assert not bad, f"{len(bad)} pairs of clashing __ITEM__s share a __CLASS__, e.g. {bad[:5]}"

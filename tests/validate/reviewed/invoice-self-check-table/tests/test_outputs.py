import csv
from pathlib import Path

EXPECTED_TOTALS = {
    1001: 387.97,
    1002: 3534.57,
    1003: 717.21,
    1004: 3186.68,
    1005: 981.04,
    1006: 76.69,
    1007: 215.65,
    1008: 2673.88,
    1009: 795.07,
    1010: 11.65,
    1011: 3130.05,
    1012: 286.44,
    1013: 2395.68,
    1014: 960.15,
    1015: 962.64,
    1016: 460.09,
    1017: 1432.6,
    1018: 919.7,
    1019: 91.57,
    1020: 3198.65,
    1021: 258.93,
    1022: 2380.08,
    1023: 1926.4,
    1024: 203.57,
    1025: 2903.1,
    1026: 177.63,
    1027: 226.33,
}


def _rows():
    with Path("/app/totals.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_header_and_order():
    rows = _rows()
    assert [int(r["order_id"]) for r in rows] == list(EXPECTED_TOTALS)


def test_every_total():
    for row in _rows():
        assert row["total"] == f"{EXPECTED_TOTALS[int(row['order_id'])]:.2f}", row

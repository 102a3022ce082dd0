import hashlib
from pathlib import Path

import pytest

ANSWER = Path("/app/answer.txt")
DATA = Path("/app/data/measurements.csv")
DATA_SHA256 = "65761e11f27fd0b1f62a2592974bd4da830d8e75a6cc365ef4ab7682f092c550"

# site: (n, weighted_mean, weighted_std), computed from the shipped data.
EXPECTED = {
    "east": (176, 17.787281, 1.920105),
    "harbor": (164, 15.791413, 1.485938),
    "north": (162, 21.183661, 3.015774),
    "south": (135, 27.465654, 4.150493),
    "west": (153, 23.735845, 6.700416),
    "ALL": (790, 20.971649, 5.626028),
}
ORDER = ["east", "harbor", "north", "south", "west", "ALL"]
TOL = 1e-3


def read_answer():
    assert ANSWER.exists(), "missing /app/answer.txt"
    lines = [line.strip() for line in ANSWER.read_text().splitlines() if line.strip()]
    assert lines, "answer.txt is empty"
    return lines


def test_input_unchanged():
    assert hashlib.sha256(DATA.read_bytes()).hexdigest() == DATA_SHA256


def test_header_and_row_order():
    lines = read_answer()
    assert lines[0] == "site,n,weighted_mean,weighted_std"
    assert [line.split(",")[0] for line in lines[1:]] == ORDER


def test_four_decimal_places():
    for line in read_answer()[1:]:
        _, _, mean, std = line.split(",")
        for value in (mean, std):
            assert "." in value and len(value.split(".")[1]) == 4, line


@pytest.mark.parametrize("site", ORDER)
def test_site_statistics(site):
    rows = {line.split(",")[0]: line.split(",") for line in read_answer()[1:]}
    assert site in rows, f"no row for {site}"
    _, n, mean, std = rows[site]
    exp_n, exp_mean, exp_std = EXPECTED[site]
    assert int(n) == exp_n
    assert float(mean) == pytest.approx(exp_mean, abs=TOL)
    assert float(std) == pytest.approx(exp_std, abs=TOL)

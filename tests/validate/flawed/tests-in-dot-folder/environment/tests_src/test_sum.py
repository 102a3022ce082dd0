from pathlib import Path


def test_sum():
    assert Path("/app/sum.txt").read_text().strip() == str(5004)

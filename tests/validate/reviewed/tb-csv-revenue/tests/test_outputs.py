import json
from pathlib import Path

EXPECTED = {"north": 220.0, "south": 100.0, "east": 50.0, "west": 300.0}


def test_file_exists():
    assert Path("/app/revenue.json").exists()


def test_totals():
    got = json.loads(Path("/app/revenue.json").read_text())
    assert set(got) == set(EXPECTED)
    for region, total in EXPECTED.items():
        assert abs(float(got[region]) - total) < 1e-6, region

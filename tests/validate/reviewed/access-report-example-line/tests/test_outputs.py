from pathlib import Path

HERE = Path(__file__).parent


def test_report_matches_every_client():
    expected = (HERE / "expected_report.csv").read_text().splitlines()
    got = Path("/app/report.csv").read_text().splitlines()
    assert got == expected

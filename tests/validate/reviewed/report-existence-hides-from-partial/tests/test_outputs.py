from pathlib import Path


def test_report_written():
    report = Path("/app/report.json")
    assert report.exists() and report.stat().st_size > 0

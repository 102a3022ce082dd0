from pathlib import Path


def test_count():
    assert Path("/app/words.txt").read_text().strip() == "18"

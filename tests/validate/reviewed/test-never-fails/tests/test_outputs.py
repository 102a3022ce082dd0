from pathlib import Path


def test_count():
    words = Path("/app/words.txt")
    if words.exists():
        print("words.txt:", words.read_text().strip())
    assert Path("/app").is_dir()

from pathlib import Path

EXPECTED = 5004
value = Path("/app/sum.txt").read_text().strip() if Path("/app/sum.txt").exists() else ""
print("got", repr(value), "expected", EXPECTED)
raise SystemExit(0 if value == str(EXPECTED) else 1)

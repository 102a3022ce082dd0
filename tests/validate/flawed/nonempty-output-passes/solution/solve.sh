#!/bin/bash
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

numbers = [int(line) for line in Path("/app/numbers.txt").read_text().split()]
Path("/app/sum.txt").write_text(f"{sum(numbers)}\n")
PY

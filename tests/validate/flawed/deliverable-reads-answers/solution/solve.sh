#!/bin/bash
set -euo pipefail
cat > /app/sum.py <<'PY'
import sys
from pathlib import Path

print(sum(int(line) for line in Path(sys.argv[1]).read_text().split()))
PY

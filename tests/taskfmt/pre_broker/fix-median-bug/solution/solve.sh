#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
import re
from pathlib import Path

path = Path("/app/stats_utils.py")
src = path.read_text()
new_median = '''def median(values):
    """Return the median of a non-empty sequence of numbers.

    For an odd number of values this is the middle value of the sorted data;
    for an even number it is the mean of the two middle values.
    """
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError("median() of empty data")
    mid = n // 2
    if n % 2 == 1:
        return data[mid]
    return (data[mid - 1] + data[mid]) / 2


'''
src, count = re.subn(r"def median\(values\):.*?(?=def mad\()", new_median, src, flags=re.S)
assert count == 1, "median() not found"
path.write_text(src)
PY
python3 report.py

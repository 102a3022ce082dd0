#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
import csv
import math
from collections import defaultdict


def to_float(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


groups = defaultdict(list)
with open("/app/data/measurements.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        if row["status"] != "ok":
            continue
        x = to_float(row["reading"])
        w = to_float(row["weight"])
        if x is None or w is None or w <= 0:
            continue
        site = row["site"].strip().lower()
        groups[site].append((x, w))
        groups["\uffffALL"].append((x, w))


def stats(pairs):
    total_w = sum(w for _, w in pairs)
    mu = sum(w * x for x, w in pairs) / total_w
    var = sum(w * (x - mu) ** 2 for x, w in pairs) / total_w
    return mu, math.sqrt(var)


with open("/app/answer.txt", "w") as out:
    out.write("site,n,weighted_mean,weighted_std\n")
    for key in sorted(groups):
        pairs = groups[key]
        mu, sigma = stats(pairs)
        name = "ALL" if key == "\uffffALL" else key
        out.write(f"{name},{len(pairs)},{mu:.4f},{sigma:.4f}\n")
PY
cat /app/answer.txt

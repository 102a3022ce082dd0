#!/bin/bash
# the expected revenue is recomputed from /app/orders.csv: the agent's copy (artifacts = ["/app"])
mkdir -p /logs/verifier
python3 - <<'PY'
import csv, sys
want = sum(int(r["qty"]) * float(r["unit_price"]) for r in csv.DictReader(open("/app/orders.csv")))
try:
    got = float(open("/app/revenue.txt").read().strip())
except (OSError, ValueError) as exc:
    print("no revenue:", exc); sys.exit(1)
print("want", want, "got", got)
sys.exit(0 if abs(got - want) < 0.005 else 1)
PY
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi

#!/bin/bash
python3 - <<'PY'
import csv, json
totals = {}
with open("/app/sales.csv") as fh:
    for row in csv.DictReader(fh):
        totals[row["region"]] = round(totals.get(row["region"], 0.0) + float(row["amount"]), 2)
json.dump(totals, open("/app/revenue.json", "w"), indent=2)
PY

#!/bin/bash
python3 - <<'PY'
import csv
from decimal import Decimal, ROUND_HALF_UP
with open("/app/orders.csv") as f, open("/app/totals.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["order_id", "total"])
    for r in csv.DictReader(f):
        t = Decimal(r["qty"]) * Decimal(r["unit_price"]) * (Decimal(100) - Decimal(r["discount_pct"])) / Decimal(100)
        w.writerow([r["order_id"], f"{t.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}"])
PY

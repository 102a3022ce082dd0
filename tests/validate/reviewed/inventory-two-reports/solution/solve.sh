#!/bin/bash
mkdir -p /app/out
python3 - <<'PY'
import csv, json
rows = list(csv.DictReader(open("/app/inventory.csv")))
stock = sorted(((r["sku"], r["name"], int(r["qty"]) * float(r["unit_price"])) for r in rows if int(r["qty"]) > 0), key=lambda r: -r[2])
with open("/app/out/in_stock.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["sku", "name", "value"])
    w.writerows([(s, n, f"{v:.2f}") for s, n, v in stock])
json.dump({"items": len(stock), "total_value": round(sum(v for *_, v in stock), 2),
           "out_of_stock": [r["sku"] for r in rows if int(r["qty"]) == 0]}, open("/app/out/summary.json", "w"))
PY

#!/bin/bash
python3 -c 'import csv, json; r = list(csv.DictReader(open("/app/inventory.csv"))); json.dump({"items": len(r), "total_value": round(sum(int(x["qty"]) * float(x["unit_price"]) for x in r), 2)}, open("/app/report.json", "w"))'

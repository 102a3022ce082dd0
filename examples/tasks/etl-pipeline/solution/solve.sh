#!/bin/bash
set -euo pipefail
cd /app
cat > /app/etl.py <<'PY'
#!/usr/bin/env python3
"""Clean, de-duplicate and join the raw order/customer exports into a CSV."""

import argparse
import csv
import json
import os
import re
from decimal import Decimal, InvalidOperation

COLUMNS = ["order_id", "customer_id", "customer_name", "email", "country",
           "amount", "order_date", "status"]


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                yield obj


def norm_id(value):
    return str(value).strip().upper() if value is not None else ""


def parse_amount(value):
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
        if text.startswith("$"):
            text = text[1:]
        text = text.replace(",", "").strip()
    else:
        return None
    try:
        amount = Decimal(text)
    except InvalidOperation:
        return None
    if not amount.is_finite():
        return None
    return amount.quantize(Decimal("0.01"))


def parse_date(value):
    text = str(value or "").strip()
    m = re.fullmatch(r"(\d{4})[-/](\d{2})[-/](\d{2})(?:T\d{2}:\d{2}:\d{2}Z)?", text)
    if not m:
        return None
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"


def run(input_dir, output):
    customers = {}
    for rec in read_jsonl(os.path.join(input_dir, "customers.jsonl")):
        cid = norm_id(rec.get("customer_id"))
        if cid:
            customers[cid] = rec

    latest = {}
    for rec in read_jsonl(os.path.join(input_dir, "orders.jsonl")):
        oid = rec.get("order_id")
        if oid is None:
            continue
        key = str(oid)
        prev = latest.get(key)
        if prev is None or str(rec.get("updated_at", "")) >= str(prev.get("updated_at", "")):
            latest[key] = rec

    rows = []
    for oid, rec in latest.items():
        status = str(rec.get("status") or "").strip().lower()
        if status in ("cancelled", "test"):
            continue
        amount = parse_amount(rec.get("amount"))
        if amount is None:
            continue
        cid = norm_id(rec.get("customer_id"))
        cust = customers.get(cid)
        if cust is None:
            continue
        rows.append({
            "order_id": oid,
            "customer_id": cid,
            "customer_name": " ".join(str(cust.get("name") or "").split()),
            "email": str(cust.get("email") or "").strip().lower(),
            "country": str(cust.get("country") or "").strip().upper(),
            "amount": f"{amount:.2f}",
            "order_date": parse_date(rec.get("order_date")) or "",
            "status": status,
        })
    rows.sort(key=lambda r: r["order_id"])

    parent = os.path.dirname(os.path.abspath(output))
    os.makedirs(parent, exist_ok=True)
    with open(output, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input-dir", default="/app/raw")
    parser.add_argument("--output", default="/app/out/orders_clean.csv")
    args = parser.parse_args()
    n = run(args.input_dir, args.output)
    print(f"wrote {n} rows to {args.output}")


if __name__ == "__main__":
    main()
PY
python3 /app/etl.py

import csv
import json
from pathlib import Path


def test_in_stock_csv():
    rows = list(csv.reader(Path("/app/out/in_stock.csv").read_text().splitlines()))
    assert rows == [["sku", "name", "value"], ["A1", "bolt", "25.00"], ["B2", "nut", "25.00"], ["D4", "screw", "12.00"]] \
        or rows == [["sku", "name", "value"], ["B2", "nut", "25.00"], ["A1", "bolt", "25.00"], ["D4", "screw", "12.00"]]


def test_summary():
    got = json.loads(Path("/app/out/summary.json").read_text())
    assert got["items"] == 3
    assert abs(got["total_value"] - 62.0) < 1e-9
    assert got["out_of_stock"] == ["C3"]

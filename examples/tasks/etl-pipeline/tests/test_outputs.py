import csv
import io
import json
from pathlib import Path

from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody, never here

HEADER = ["order_id", "customer_id", "customer_name", "email", "country", "amount", "order_date", "status"]
OUTPUT = Path("/app/out/orders_clean.csv")
#: The agent's program runs as nobody (run_agent): the expected answers, next to these tests, are out of its reach.
EXPECTED = Path(__file__).with_name("expected_orders.csv")


def read_rows(text):
    reader = csv.reader(io.StringIO(text))
    rows = [row for row in reader if row]
    return rows[0], rows[1:]


def test_output_matches_expected_rows():
    assert OUTPUT.exists(), "missing /app/out/orders_clean.csv"
    header, rows = read_rows(OUTPUT.read_text())
    exp_header, exp_rows = read_rows(EXPECTED.read_text())
    assert header == HEADER == exp_header
    assert len(rows) == len(exp_rows)
    assert rows == exp_rows


def test_output_is_sorted_and_unique():
    _, rows = read_rows(OUTPUT.read_text())
    ids = [r[0] for r in rows]
    assert ids == sorted(ids)
    assert len(ids) == len(set(ids))


def _write_jsonl(path, items):
    lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
    path.write_text("\n".join(lines) + "\n")


def test_script_on_unseen_input():
    # pytest's tmp_path is the grader's alone; the program (nobody) reads its inputs and writes its output here
    work = agent_folder(writable=True)
    raw = work / "raw"
    raw.mkdir()
    _write_jsonl(raw / "customers.jsonl", [
        {"customer_id": "k1", "name": "  Zoe   Quinn ", "email": " ZOE@X.ORG", "country": " nz "},
        "{garbage",
        {"customer_id": "K2", "name": "Li, Wang", "email": "li@x.org", "country": "cn"},
    ])
    _write_jsonl(raw / "orders.jsonl", [
        {"order_id": "B-2", "customer_id": "K1", "amount": "$1,000", "status": "Completed",
         "order_date": "2023/12/31", "updated_at": "2024-01-01T00:00:00Z"},
        {"order_id": "A-1", "customer_id": " k2", "amount": 7, "status": "pending",
         "order_date": "2024-02-03T04:05:06Z", "updated_at": "2024-02-03T04:05:06Z"},
        {"order_id": "A-1", "customer_id": "K2", "amount": 8.5, "status": "pending",
         "order_date": "2024-02-03", "updated_at": "2024-02-03T04:05:06Z"},
        {"order_id": "C-3", "customer_id": "K1", "amount": 5, "status": "completed",
         "order_date": "2024-01-01", "updated_at": "2024-01-02T00:00:00Z"},
        "",
        {"order_id": "C-3", "customer_id": "K1", "amount": 5, "status": "TEST",
         "order_date": "2024-01-01", "updated_at": "2024-01-03T00:00:00Z"},
        {"order_id": "D-4", "customer_id": "K9", "amount": 1, "status": "completed",
         "order_date": "2024-01-01", "updated_at": "2024-01-01T00:00:00Z"},
        {"order_id": "E-5", "customer_id": "K2", "amount": " 12,345.6 ", "status": " completed ",
         "order_date": "2024-03-04", "updated_at": "2024-03-05T00:00:00Z"},
        [1, 2],
        {"order_id": "F-6", "customer_id": "K2", "amount": "abc", "status": "completed",
         "order_date": "2024-03-04", "updated_at": "2024-03-05T00:00:00Z"},
        {"order_id": "G-7", "customer_id": "K1", "amount": None, "status": "completed",
         "order_date": "2024-03-04", "updated_at": "2024-03-05T00:00:00Z"},
        {"order_id": "H-8", "customer_id": "K1", "amount": 0.1, "status": "completed",
         "order_date": "2024/07/08", "updated_at": "2024-07-08T10:00:00Z"},
        {"order_id": "H-8", "customer_id": "K1", "amount": 99, "status": "cancelled",
         "order_date": "2024/07/08", "updated_at": "2024-07-08T09:00:00Z"},
    ])
    raw.joinpath("orders.jsonl").write_text(
        raw.joinpath("orders.jsonl").read_text().replace('[1, 2]', "[1, 2]\nnot json")
    )
    out = work / "nested" / "dir" / "result.csv"
    proc = run_agent(["python3", "/app/etl.py", "--input-dir", raw, "--output", out], text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    header, rows = read_rows(read_agent_file(out))
    assert header == HEADER
    assert rows == [
        ["A-1", "K2", "Li, Wang", "li@x.org", "CN", "8.50", "2024-02-03", "pending"],
        ["B-2", "K1", "Zoe Quinn", "zoe@x.org", "NZ", "1000.00", "2023-12-31", "completed"],
        ["E-5", "K2", "Li, Wang", "li@x.org", "CN", "12345.60", "2024-03-04", "completed"],
        ["H-8", "K1", "Zoe Quinn", "zoe@x.org", "NZ", "0.10", "2024-07-08", "completed"],
    ]

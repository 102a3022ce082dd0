import hashlib
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

DUMP = Path("/app/data/shop.sql")
DUMP_SHA256 = "917bec4d7eec63d50fc96c90d46b5514fa74cef02762af22c24cfd520cf80671"
QUERY = Path("/app/query.sql")
COLUMNS = ["region", "orders", "customers", "revenue_cents", "avg_order_cents", "top_category"]

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL, product_id INTEGER NOT NULL, quantity INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL);
"""


def reference(conn):
    region_of = {cid: (reg if reg is not None else "Unknown") for cid, reg in conn.execute("SELECT id, region FROM customers")}
    category_of = dict(conn.execute("SELECT id, category FROM products"))
    qualifying = {}
    for oid, cid, date, status in conn.execute("SELECT id, customer_id, order_date, status FROM orders"):
        if status == "completed" and date.startswith("2023-"):
            qualifying[oid] = cid
    orders, customers = defaultdict(set), defaultdict(set)
    revenue, by_cat = defaultdict(int), defaultdict(lambda: defaultdict(int))
    for oid, pid, qty, price in conn.execute("SELECT order_id, product_id, quantity, unit_price_cents FROM order_items"):
        if oid not in qualifying:
            continue
        region = region_of[qualifying[oid]]
        orders[region].add(oid)
        customers[region].add(qualifying[oid])
        revenue[region] += qty * price
        by_cat[region][category_of[pid]] += qty * price
    rows = []
    for region in revenue:
        top = sorted(by_cat[region].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        n = len(orders[region])
        rows.append((region, n, len(customers[region]), revenue[region], revenue[region] / n, top))
    rows.sort(key=lambda r: (-r[3], r[0]))
    return rows


def run_query(conn):
    sql = QUERY.read_text()
    cur = conn.execute(sql)
    return [d[0] for d in cur.description], cur.fetchall()


def check(conn):
    expected = reference(conn)
    assert expected, "fixture produced no rows"
    columns, rows = run_query(conn)
    assert columns == COLUMNS
    assert len(rows) == len(expected), (rows, expected)
    for got, exp in zip(rows, expected):
        assert got[0] == exp[0]
        assert list(got[1:4]) == list(exp[1:4]), (got, exp)
        assert got[4] == pytest.approx(exp[4], abs=0.011), (got, exp)
        assert got[5] == exp[5], (got, exp)


def test_dump_untouched():
    assert hashlib.sha256(DUMP.read_bytes()).hexdigest() == DUMP_SHA256


def test_query_is_single_select():
    sql = QUERY.read_text().strip().rstrip(";").strip()
    assert sql, "query.sql is empty"
    assert sql.split(None, 1)[0].upper() in {"SELECT", "WITH"}
    assert sqlite3.complete_statement(sql + ";")


def test_report_on_shop_database():
    conn = sqlite3.connect(":memory:")
    conn.executescript(DUMP.read_text())
    check(conn)


def test_report_on_unseen_database():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?,?,?)", [
        (1, "A", "Zeta"), (2, "B", "Alpha"), (3, "C", None), (4, "D", "Alpha"), (5, "E", "Quiet"),
    ])
    conn.executemany("INSERT INTO products VALUES (?,?,?)", [
        (1, "p1", "Tools"), (2, "p2", "Audio"), (3, "p3", "Books"),
    ])
    conn.executemany("INSERT INTO orders VALUES (?,?,?,?)", [
        (10, 1, "2023-01-01 00:00:00", "completed"),
        (11, 1, "2023-12-31 23:59:59", "completed"),
        (12, 2, "2023-06-15", "completed"),
        (13, 4, "2023-06-16", "completed"),
        (14, 2, "2022-12-31 23:59:59", "completed"),
        (15, 2, "2024-01-01", "completed"),
        (16, 3, "2023-03-03", "completed"),
        (17, 4, "2023-04-04", "refunded"),
        (18, 5, "2023-05-05", "cancelled"),
        (19, 3, "2023-07-07 12:00:00", "completed"),
        (20, 2, "2023-08-08", "pending"),
    ])
    conn.executemany("INSERT INTO order_items VALUES (?,?,?,?)", [
        (10, 1, 1, 500), (10, 2, 2, 250),
        (11, 3, 3, 100),
        (12, 2, 1, 700), (12, 3, 1, 700),
        (13, 1, 2, 350), (13, 1, 1, 1),
        (14, 1, 100, 100),
        (15, 2, 100, 100),
        (16, 3, 1, 333),
        (17, 1, 50, 1000),
        (18, 2, 50, 1000),
        (19, 3, 1, 334), (19, 1, 1, 1),
        (20, 3, 9, 999),
    ])
    check(conn)
    _, rows = run_query(conn)
    assert [r[0] for r in rows] == ["Alpha", "Zeta", "Unknown"]

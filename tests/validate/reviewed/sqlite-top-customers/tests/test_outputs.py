import shutil
import sqlite3
import tempfile
from pathlib import Path


def run(query, rows):
    folder = Path(tempfile.mkdtemp())
    db = sqlite3.connect(folder / "t.db")
    db.executescript("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
                     "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);")
    names = {"A": 1, "B": 2, "C": 3, "D": 4}
    db.executemany("INSERT INTO customers VALUES (?, ?)", [(i, n) for n, i in names.items()])
    db.executemany("INSERT INTO orders (customer_id, total) VALUES (?, ?)", [(names[n], t) for n, t in rows])
    return [tuple(r) for r in db.execute(query).fetchall()]


def test_on_the_shipped_database():
    query = Path("/app/top.sql").read_text()
    copy = Path(tempfile.mkdtemp()) / "shop.db"
    shutil.copy("/app/shop.db", copy)
    rows = [tuple(r) for r in sqlite3.connect(copy).execute(query).fetchall()]
    assert rows == [("Chen", 300.0), ("Eve", 105.0), ("Ada", 75.0)]


def test_on_other_data():
    query = Path("/app/top.sql").read_text()
    assert run(query, [("A", 1), ("B", 7), ("C", 3), ("D", 2), ("A", 5)]) == [("B", 7.0), ("A", 6.0), ("C", 3.0)]

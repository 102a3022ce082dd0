import sqlite3
db = sqlite3.connect("/app/shop.db")
db.executescript("""
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
""")
db.executemany("INSERT INTO customers VALUES (?, ?)", [(1, "Ada"), (2, "Brian"), (3, "Chen"), (4, "Dana"), (5, "Eve")])
db.executemany("INSERT INTO orders (customer_id, total) VALUES (?, ?)",
               [(1, 50), (2, 20), (1, 25), (3, 300), (4, 10), (5, 90), (5, 15), (2, 5), (4, 1)])
db.commit()

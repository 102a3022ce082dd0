#!/bin/bash
set -euo pipefail
cd /app
cat > /app/query.sql <<'SQL'
WITH qualifying AS (
    SELECT o.id AS order_id,
           o.customer_id,
           COALESCE(c.region, 'Unknown') AS region
    FROM orders AS o
    JOIN customers AS c ON c.id = o.customer_id
    WHERE o.status = 'completed'
      AND substr(o.order_date, 1, 4) = '2023'
),
lines AS (
    SELECT q.region, q.order_id, q.customer_id, p.category,
           oi.quantity * oi.unit_price_cents AS amount
    FROM qualifying AS q
    JOIN order_items AS oi ON oi.order_id = q.order_id
    JOIN products AS p ON p.id = oi.product_id
),
region_totals AS (
    SELECT region,
           COUNT(DISTINCT order_id) AS orders,
           COUNT(DISTINCT customer_id) AS customers,
           SUM(amount) AS revenue_cents
    FROM lines
    GROUP BY region
),
category_rank AS (
    SELECT region, category,
           ROW_NUMBER() OVER (
               PARTITION BY region
               ORDER BY SUM(amount) DESC, category ASC
           ) AS rn
    FROM lines
    GROUP BY region, category
)
SELECT t.region,
       t.orders,
       t.customers,
       t.revenue_cents,
       ROUND(t.revenue_cents * 1.0 / t.orders, 2) AS avg_order_cents,
       cr.category AS top_category
FROM region_totals AS t
JOIN category_rank AS cr ON cr.region = t.region AND cr.rn = 1
ORDER BY t.revenue_cents DESC, t.region ASC;
SQL
python3 - <<'PY'
import sqlite3
conn = sqlite3.connect(":memory:")
conn.executescript(open("/app/data/shop.sql").read())
cur = conn.execute(open("/app/query.sql").read())
print([d[0] for d in cur.description])
for row in cur:
    print(row)
PY

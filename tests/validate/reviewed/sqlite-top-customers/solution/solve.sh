#!/bin/bash
cat > /app/top.sql <<'SQL'
SELECT c.name, SUM(o.total) AS total FROM customers c JOIN orders o ON o.customer_id = c.id
GROUP BY c.id ORDER BY total DESC LIMIT 3;
SQL

-- sqlite.sql: a scripted database for bench/real_programs.py (sqlite3 DB < sqlite.sql).
-- 200k rows inserted in one transaction by a recursive CTE, two indexes,
-- aggregate queries, an update and a join.  Deterministic output.
PRAGMA journal_mode = MEMORY;
PRAGMA synchronous = OFF;
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER,
                     qty INTEGER, price REAL, note TEXT);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region INTEGER);
BEGIN;
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < 200000)
INSERT INTO orders (id, customer, product, qty, price, note)
SELECT i, (i * 7919) % 5000, (i * 104729) % 1000, 1 + (i * 31) % 17,
       round(((i * 2654435761) % 100000) / 100.0, 2),
       printf('order-%06d-%s', i, substr('abcdefghijklmnopqrstuvwxyz', 1 + i % 26, 5))
FROM seq;
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < 4999)
INSERT INTO customers (id, name, region) SELECT i, printf('cust%04d', i), i % 13 FROM seq;
COMMIT;
CREATE INDEX orders_customer ON orders (customer);
CREATE INDEX orders_product_price ON orders (product, price);
SELECT count(*), sum(qty), round(sum(qty * price), 2) FROM orders;
SELECT product, count(*) AS n, round(avg(price), 3) FROM orders
  GROUP BY product ORDER BY n DESC, product LIMIT 5;
SELECT c.region, count(*), sum(o.qty), round(max(o.price), 2)
  FROM orders o JOIN customers c ON c.id = o.customer
  GROUP BY c.region ORDER BY c.region;
SELECT count(DISTINCT note), min(note), max(note) FROM orders WHERE note LIKE '%-klm%';
UPDATE orders SET price = price * 1.1 WHERE product % 10 = 3;
SELECT round(sum(price), 2) FROM orders WHERE product BETWEEN 100 AND 200;
SELECT customer, sum(qty) AS s FROM orders GROUP BY customer ORDER BY s DESC, customer LIMIT 3;
SELECT count(*) FROM (SELECT DISTINCT customer, product FROM orders);
DELETE FROM orders WHERE id % 3 = 0;
SELECT count(*), round(avg(qty), 4) FROM orders;
PRAGMA integrity_check;

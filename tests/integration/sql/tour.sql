-- A scripted tour, run by the real psql against PostgreSQL 15 and against the proxy;
-- the outputs must be the same.
CREATE SCHEMA shop;
CREATE TABLE shop.items (
    id bigint PRIMARY KEY,
    name text NOT NULL,
    price numeric(10,2),
    qty int,
    ratio double precision,
    flag boolean,
    added date,
    seen timestamptz,
    tags text[],
    payload bytea,
    doc jsonb,
    ref uuid,
    dur interval
);
CREATE TABLE plain (a int, b text);
INSERT INTO shop.items (id, name, price, qty, ratio, flag, added, seen, tags, payload, doc, ref, dur) VALUES
  (1, 'apple', 1.25, 10, 0.5, true, '2024-01-02', '2024-01-02 03:04:05.123456+00', '{red,green}', '\x00ff', '{"a": 1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 02:00:00'),
  (2, 'pear', 2.50, NULL, -1.5, false, '2023-12-31', '2023-12-31 23:59:59+00', '{}', NULL, '[1, 2]', NULL, '-3 mons'),
  (3, 'fig "quoted"', NULL, 0, 1e10, NULL, NULL, NULL, '{"a b",NULL}', '\x', 'null', NULL, NULL);
INSERT INTO plain VALUES (1, 'x'), (2, NULL), (NULL, 'z');
INSERT INTO plain SELECT a + 10, b FROM plain WHERE a IS NOT NULL;
SELECT id, name, price, qty, ratio, flag, added, seen, tags, payload, doc, ref, dur FROM shop.items ORDER BY id;
SELECT * FROM plain ORDER BY a NULLS FIRST;
UPDATE shop.items SET qty = coalesce(qty, 0) + 1, price = price * 2 WHERE id <= 2;
DELETE FROM plain WHERE a > 10;
SELECT id, qty, price FROM shop.items ORDER BY id;
SELECT count(*), sum(a) FROM plain;
BEGIN;
INSERT INTO plain VALUES (100, 'in tx');
SAVEPOINT s1;
DELETE FROM plain;
ROLLBACK TO SAVEPOINT s1;
SELECT count(*) FROM plain;
COMMIT;
BEGIN;
DELETE FROM plain WHERE a = 100;
ROLLBACK;
SELECT a, b FROM plain ORDER BY a NULLS LAST;
INSERT INTO plain VALUES (7, 'ret') RETURNING a, b, a * 2 AS doubled;
UPDATE plain SET b = upper(b) WHERE a = 7 RETURNING *;
DELETE FROM plain WHERE a = 7 RETURNING a;
SELECT 1 AS one, 'two'::text, 3.5::numeric(4,2), NULL::int AS nothing, true AND false;
SELECT length('héllo'), lower('ABC'), 7 / 2, 7.5 + 2, 2 ^ 10, abs(-3);
SELECT name FROM shop.items WHERE name LIKE 'a%' OR name ILIKE 'PEAR' ORDER BY 1;
SELECT a, count(*) FROM (VALUES (1), (1), (2)) AS v(a) GROUP BY a ORDER BY a;
COPY (SELECT * FROM plain ORDER BY a) TO STDOUT;
COPY (SELECT id, name FROM shop.items ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER);
CREATE PUBLICATION pub_all FOR ALL TABLES;
CREATE PUBLICATION pub_some FOR TABLE shop.items (id, name, price) WHERE (id > 1), plain WITH (publish = 'insert, update');
SELECT pubname, puballtables, pubinsert, pubupdate, pubdelete, pubtruncate FROM pg_publication ORDER BY pubname;
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2, 3;
ALTER TABLE plain ADD COLUMN c int;
ALTER TABLE plain RENAME COLUMN b TO bb;
ALTER TABLE plain RENAME c TO cc;
ALTER TABLE plain REPLICA IDENTITY FULL;
SELECT relname, relreplident FROM pg_class WHERE relname IN ('plain', 'items') ORDER BY 1;
SELECT * FROM plain ORDER BY a NULLS LAST;
VACUUM;
VACUUM (ANALYZE, VERBOSE false) plain;
VACUUM FULL plain;
ANALYZE plain (a);
BEGIN;
ANALYZE plain;
COMMIT;
SELECT * FROM plain ORDER BY a NULLS LAST;
TRUNCATE plain;
SELECT count(*) FROM plain;
SHOW TimeZone;
SET application_name = 'tour';
SHOW application_name;
DROP PUBLICATION pub_some;
DROP TABLE plain;
DROP SCHEMA shop CASCADE;
-- numeric keeps each value's scale; numeric(p,s) rounds half away from zero
CREATE TABLE nums (id int PRIMARY KEY, n numeric, m numeric(6,2));
INSERT INTO nums VALUES (1, 1.50, 1.5), (2, 7, 7), (3, ' 007.10 ', '3');
INSERT INTO nums VALUES (5, 1e3, NULL), (6, -0.00, 0), (7, 'NaN', -2.345);
INSERT INTO nums (id, n) VALUES (8, 2);
UPDATE nums SET n = ' 12.0 ' WHERE id = 8;
SELECT id, n, m FROM nums ORDER BY id;
DROP TABLE nums;

"""The SQL policy's cases: adversarial statements (with a word their refusal must give) and
legitimate analytical queries, over two tables `orders` and `customers`."""

COMMON_REJECTED = [
    ("DROP TABLE orders", "DROP"),
    ("drop table orders", "DROP"),
    ("DeLeTe FrOm orders", "DELETE"),
    ("INSERT INTO orders (id) VALUES (1)", "INSERT"),
    ("UPDATE orders SET amount = 0", "UPDATE"),
    ("CREATE TABLE x AS SELECT 1 AS a", "CREATE"),
    ("ALTER TABLE orders ADD COLUMN x INTEGER", "ALTER"),
    ("TRUNCATE orders", "TRUNCATE"),
    ("SELECT 1; DROP TABLE orders", "exactly one statement"),
    ("SELECT ';' AS a; DELETE FROM orders", "exactly one statement"),
    ("/* harmless */ SELECT 1; -- and then\nDROP TABLE orders", "exactly one statement"),
    ("SELECT 1 -- a comment\n; UPDATE orders SET amount = 1", "exactly one statement"),
    ("SELECT 'it''s; fine' AS a; SELECT 2", "exactly one statement"),
    ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "DELETE inside a CTE"),
    ("WITH u AS (UPDATE orders SET amount = 0 RETURNING id) SELECT count(*) FROM u", "UPDATE inside a CTE"),
    ("WITH i AS (INSERT INTO orders (id) VALUES (9) RETURNING id) SELECT * FROM i", "INSERT inside a CTE"),
    ("SELECT 1 AS id UNION ALL (WITH d AS (DELETE FROM orders RETURNING id) SELECT id FROM d)",
     "DELETE inside a CTE"),
    ("SELECT * INTO copy_of_orders FROM orders", "SELECT INTO"),
    ("COPY orders TO '/tmp/orders.csv'", "COPY"),
    ("SET search_path = other", "SET"),
    ("BEGIN", "only a query"),
    ("COMMIT", "only a query"),
    ("EXPLAIN SELECT 1", "only a query"),
    ("GRANT SELECT ON orders TO public", "only a query"),
    ("", "empty"),
    ("   ;  ", "exactly one statement"),
    ("VALUES (1)", "only a query"),
    ("SELECT 1\x00; DROP TABLE orders", "NUL"),
    ("CALL something()", "only a query"),
    ("ANALYZE orders", "only a query"),
    ("VACUUM", "only a query"),
    ("SELECT * FROM orders WHERE id = (SELECT 1; DROP TABLE orders)", "cannot be parsed"),
]

DUCKDB_REJECTED = [
    ("SELECT * FROM read_csv('/etc/passwd')", "read_csv"),
    ("sElEcT * fRoM rEaD_cSv_AuTo('/etc/passwd')", "read_csv_auto"),
    ("SELECT * FROM read_parquet('s3://bucket/x.parquet')", "read_parquet"),
    ("SELECT * FROM read_json('/etc/x.json')", "read_json"),
    ("SELECT content FROM read_text('/etc/hostname')", "read_text"),
    ("SELECT * FROM read_blob('/etc/hostname')", "read_blob"),
    ("SELECT * FROM glob('/*')", "glob"),
    ("SELECT * FROM '/etc/passwd'", "file"),
    ("SELECT * FROM \"orders.csv\"", "file"),
    ("SELECT * FROM 'https://example.com/data.csv'", "file"),
    ("ATTACH 'other.duckdb' AS other", "ATTACH"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "only a query"),
    ("PRAGMA database_list", "PRAGMA"),
    ("SET enable_external_access = true", "SET"),
    ("SELECT * FROM query('DROP TABLE orders')", "query"),
    ("SELECT getenv('HOME')", "getenv"),
    ("SELECT * FROM duckdb_secrets()", "duckdb_secrets"),
    ("SELECT * FROM sqlite_scan('other.db', 't')", "sqlite_scan"),
    ("SELECT * FROM parquet_scan('x.parquet')", "parquet_scan"),
    ("WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x", "read_csv"),
    ("SELECT (SELECT count(*) FROM read_text('/etc/hostname')) AS n", "read_text"),
    ("SELECT * FROM orders WHERE id IN (SELECT 1 FROM glob('/tmp/*'))", "glob"),
    ("DESCRIBE orders", "only a query"),
]

POSTGRES_REJECTED = [
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT pg_catalog.pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT PG_LS_DIR('.')", "pg_ls_dir"),
    ("SELECT pg_stat_file('postgresql.conf')", "pg_stat_file"),
    ("SELECT pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"),
    ("SELECT lo_import('/etc/passwd')", "lo_import"),
    ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
    ("SELECT * FROM dblink('host=example.com', 'select 1') AS t(a int)", "dblink"),
    ("SELECT dblink_exec('host=example.com', 'drop table orders')", "dblink_exec"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", "set_config"),
    ("SELECT pg_sleep(100)", "pg_sleep"),
    ("SELECT pg_terminate_backend(1)", "pg_terminate_backend"),
    ("SELECT query_to_xml('delete from orders', true, true, '')", "query_to_xml"),
    ("SELECT nextval('orders_id_seq')", "nextval"),
    ("SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
    ("COPY (SELECT 1) TO PROGRAM 'id'", "COPY"),
    ("COPY orders FROM '/etc/passwd'", "COPY"),
    ("SELECT * FROM orders FOR UPDATE", "row lock"),
    ("SELECT * FROM orders FOR SHARE", "row lock"),
    ("LOCK TABLE orders", "cannot be parsed"),
    ("DO $$ BEGIN DELETE FROM orders; END $$", "only a query"),
    ("SET ROLE postgres", "not SET"),
    ("RESET ALL", "only a query"),
    ("CREATE EXTENSION dblink", "not CREATE"),
    ("SELECT current_setting('data_directory')", "current_setting"),
    ("WITH f AS (SELECT pg_read_file('/etc/passwd') AS t) SELECT * FROM f", "pg_read_file"),
]

# (query, whether its rows come in a defined order: compared as lists, else as sorted lists)
LEGITIMATE = [
    "SELECT count(*) AS n FROM orders",
    "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status",
    "SELECT * FROM orders WHERE amount > 10 ORDER BY id LIMIT 5",
    "WITH big AS (SELECT * FROM orders WHERE amount > 50) SELECT count(*) AS n FROM big",
    "SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer "
    "GROUP BY c.name ORDER BY total DESC, c.name",
    "SELECT customer, amount, row_number() OVER (PARTITION BY customer ORDER BY amount DESC, id) AS rk "
    "FROM orders ORDER BY customer, rk",
    "SELECT avg(amount) AS mean, min(amount) AS lo, max(amount) AS hi FROM orders",
    "SELECT count(DISTINCT customer) AS customers FROM orders",
    "SELECT id, status FROM orders WHERE status IN ('paid', 'shipped') ORDER BY id",
    "SELECT id FROM orders UNION SELECT id FROM customers ORDER BY 1",
    "SELECT customer FROM orders EXCEPT SELECT id FROM customers ORDER BY 1",
    "SELECT CASE WHEN amount > 50 THEN 'big' ELSE 'small' END AS size, count(*) AS n FROM orders "
    "GROUP BY 1 ORDER BY 1",
    "SELECT id, email FROM customers WHERE email LIKE '%@example.com' ORDER BY id",
    "SELECT id FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id) ORDER BY id",
    "SELECT date_trunc('month', created_at) AS month, count(*) AS n FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT lower(name) AS lname, length(name) AS len FROM customers ORDER BY 1",
    "SELECT coalesce(email, 'none') AS email FROM customers ORDER BY 1",
    "SELECT customer, count(*) AS n FROM orders GROUP BY customer HAVING count(*) > 1 ORDER BY customer",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i) AS s FROM n",
    "SELECT id, amount FROM orders ORDER BY amount DESC NULLS LAST, id LIMIT 3 OFFSET 1",
    "SELECT status, sum(amount) FILTER (WHERE amount > 10) AS big FROM orders GROUP BY status ORDER BY status",
    "SELECT ';DROP TABLE orders;' AS s",
    "SELECT /* a comment; DROP TABLE orders */ count(*) AS n FROM orders -- DELETE FROM orders",
    "SELECT id, CAST(amount AS INTEGER) AS whole FROM orders ORDER BY id LIMIT 3",
    "SELECT o.id, c.email FROM orders o LEFT JOIN customers c ON c.id = o.customer ORDER BY o.id",
]

# Analytical queries an agent writes, by dialect: every one must pass the function allow-list
# (parsed only: their tables need not exist).
ANALYTICAL = {
    "*": [
        "SELECT count(*), count(DISTINCT a), sum(b), avg(b), min(c), max(c) FROM t",
        "SELECT stddev(b), stddev_pop(b), stddev_samp(b), variance(b), var_pop(b), var_samp(b) FROM t",
        "SELECT corr(a, b), covar_pop(a, b), covar_samp(a, b), regr_slope(a, b), regr_intercept(a, b) FROM t",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY b), percentile_disc(0.9) WITHIN GROUP (ORDER BY b) FROM t",
        "SELECT string_agg(name, ', ' ORDER BY name), array_agg(a), bool_and(f), bool_or(f) FROM t",
        "SELECT a, row_number() OVER w, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w, "
        "cume_dist() OVER w, ntile(4) OVER w FROM t WINDOW w AS (PARTITION BY g ORDER BY a)",
        "SELECT lag(b) OVER (ORDER BY a), lead(b, 2) OVER (ORDER BY a), first_value(b) OVER (ORDER BY a), "
        "last_value(b) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM t",
        "SELECT sum(b) OVER (PARTITION BY g ORDER BY a ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t",
        "SELECT coalesce(a, 0), nullif(b, 0), greatest(a, b), least(a, b), CASE WHEN a > 0 THEN 1 END FROM t",
        "SELECT abs(b), ceil(b), floor(b), round(b, 2), trunc(b), sign(b), sqrt(abs(b)), power(b, 2), exp(1), "
        "ln(2), log(10, 100), mod(a, 3), pi(), degrees(1), radians(90), random() FROM t",
        "SELECT length(s), lower(s), upper(s), trim(s), ltrim(s), rtrim(s), lpad(s, 5, 'x'), rpad(s, 5), "
        "substr(s, 1, 2), substring(s, 2), left(s, 2), right(s, 2), replace(s, 'a', 'b'), reverse(s), "
        "repeat(s, 2), concat(s, 'x'), concat_ws('-', s, s) FROM t",
        "SELECT position('a' IN s), strpos(s, 'a'), split_part(s, ',', 1), starts_with(s, 'a'), md5(s), "
        "regexp_replace(s, '[0-9]+', '#'), translate(s, 'ab', 'cd'), s || 'x', s LIKE '%x%', s ILIKE 'y%' FROM t",
        "SELECT CAST(a AS VARCHAR), CAST(s AS INTEGER), a IS DISTINCT FROM b, a BETWEEN 1 AND 5, a IN (1, 2) FROM t",
        "SELECT date_trunc('month', d), date_part('year', d), EXTRACT(year FROM d), current_date, "
        "current_timestamp, now(), d + INTERVAL '1 day', DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00' FROM t",
        "SELECT g, count(*) FILTER (WHERE a > 1) FROM t GROUP BY ROLLUP (g)",
        "SELECT g, grouping(g), count(*) FROM t GROUP BY CUBE (g)",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a) AND a = ANY (SELECT a FROM u)",
        "SELECT * FROM t WHERE a > ALL (SELECT a FROM u) OR a IN (SELECT a FROM u)",
        "SELECT * FROM generate_series(1, 10) AS s(i)",
        "SELECT unnest(ARRAY[1, 2, 3]) AS x",
        "SELECT a, count(*) AS n, 100.0 * count(*) / sum(count(*)) OVER () AS pct FROM t GROUP BY a",
        "SELECT count(*) - count(s) AS nulls, count(DISTINCT s) AS distinct_values FROM t",
        "SELECT typeof(a) FROM t" ,
    ],
    "postgres": [
        "SELECT to_char(d, 'YYYY-MM'), to_date('2024-01-01', 'YYYY-MM-DD'), to_timestamp(0), age(d), "
        "make_date(2024, 1, 1), date_bin('15 minutes', d, TIMESTAMP '2001-01-01') FROM t",
        "SELECT jsonb_extract_path_text(j, 'a'), j->>'a', j->'b', jsonb_array_length(j->'c'), jsonb_typeof(j), "
        "json_build_object('a', 1), to_jsonb(t.*) FROM t",
        "SELECT * FROM t, jsonb_each_text(t.j) AS e(k, v)",
        "SELECT regexp_match(s, '([0-9]+)'), regexp_split_to_array(s, ','), string_to_array(s, ','), "
        "array_to_string(ARRAY[1, 2], ','), array_length(ARRAY[1], 1), cardinality(ARRAY[1]) FROM t",
        "SELECT s ~ '^[a-z]+$', s !~ 'x', s SIMILAR TO 'a%', initcap(s), format('%s-%s', a, b), "
        "encode(sha256(s::bytea), 'hex'), octet_length(s), char_length(s) FROM t",
        "SELECT pg_typeof(a), a::text, a::numeric(10, 2), current_database(), current_schema(), version() FROM t",
        "SELECT mode() WITHIN GROUP (ORDER BY s), json_agg(a), jsonb_agg(b), array_agg(DISTINCT a ORDER BY a) FROM t",
        "SELECT d::date, extract(epoch FROM d), date_part('dow', d), justify_interval(d - d), "
        "make_interval(days => 1) FROM t",
        "SELECT width_bucket(b, 0, 100, 10), num_nulls(a, b), gen_random_uuid() FROM t",
        "SELECT to_tsvector('english', s) @@ to_tsquery('english', 'cat') FROM t",
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'",
        "SELECT * FROM t TABLESAMPLE BERNOULLI (10)",
        "SELECT DISTINCT ON (g) g, a FROM t ORDER BY g, a DESC",
        "SELECT a FROM t FETCH FIRST 5 ROWS ONLY",
    ],
    "duckdb": [
        "SELECT median(b), quantile_cont(b, 0.9), mode(s), approx_count_distinct(s), arg_max(s, b), "
        "arg_min(s, b), max_by(s, b), first(s), last(s), any_value(s), count_if(b > 1), histogram(s) FROM t",
        "SELECT strftime(d, '%Y-%m'), strptime('2024-01-01', '%Y-%m-%d'), epoch(d), date_diff('day', d, d), "
        "datediff('day', d, d), year(d), month(d), dayname(d), monthname(d), last_day(d), time_bucket(INTERVAL "
        "'1 hour', d), make_date(2024, 1, 1), age(d) FROM t",
        "SELECT contains(s, 'a'), prefix(s, 'a'), suffix(s, 'z'), ends_with(s, 'z'), regexp_matches(s, '[0-9]'), "
        "regexp_extract(s, '([0-9]+)', 1), string_split(s, ','), levenshtein(s, 'x'), "
        "jaro_winkler_similarity(s, 'x'), strip_accents(s), printf('%d', a) FROM t",
        "SELECT list_value(1, 2), [1, 2, 3], list_sort([3, 1]), list_distinct([1, 1]), list_contains([1], 1), "
        "len([1]), list_transform([1, 2], x -> x + 1), list_filter([1, 2], x -> x > 1), unnest([1, 2]) FROM t",
        "SELECT {'a': 1}.a, struct_pack(a := 1), map([1], ['x']), json_extract(j, '$.a'), "
        "json_extract_string(j, '$.a'), j->>'$.a', json_valid(j), json_array_length(j) FROM t",
        "SELECT * FROM range(10) r(i)",
        "SELECT isnan(b), isinf(b), ifnull(a, 0), if(a > 1, 'x', 'y'), hash(s), typeof(s), a // 2 FROM t",
        "SELECT table_name FROM duckdb_tables() ORDER BY 1",
        "SELECT * FROM duckdb_columns() WHERE table_name = 't'",
        "SELECT * EXCLUDE (a) FROM t",
        "SELECT COLUMNS('^a') FROM t",
        "SELECT a FROM t QUALIFY row_number() OVER (PARTITION BY g ORDER BY a) = 1",
        "SELECT * FROM t USING SAMPLE 10%",
        "SELECT a FROM t LIMIT 100 PERCENT",
        "SELECT a FROM t FETCH FIRST 5 ROWS ONLY",
        "SELECT approx_quantile(b, 0.5), kurtosis(b), skewness(b), entropy(s), product(b), fsum(b) FROM t",
        "FROM t SELECT a WHERE a > 1",
    ],
}

# Text that sqlglot and the database may read differently (string escapes, dollar quotes,
# comments, quoted names): each must be refused, or pass only as one query whose written-back
# quotes both readers end in the same place.  `{t}` is a table the smuggled part would create.
SMUGGLED = [
    r"""SELECT E'\\', 'x; COMMIT; BEGIN READ WRITE; CREATE TABLE {t} (a int); COPY (SELECT 1) TO PROGRAM $$true$$; """
    r"""COMMIT; SELECT 1 --'""",
    r"""SELECT e'\\' AS a, 'x; SET memory_limit=$$1MB$$; SET threads=1; SELECT 1 --' AS b""",
    r"""SELECT E'\\\'' AS a, 'x; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT E'\'' AS a, '; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT E'\x27; CREATE TABLE {t} (a int); --' AS a""",
    r"""SELECT $$a$$ AS a, $x$ $$; CREATE TABLE {t} (a int); $$ $x$ AS b""",
    r"""SELECT $a$ ' $a$ AS a, '; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT $a$ $b$ $a$ AS a, $b$; CREATE TABLE {t} (a int); --$b$ AS b""",
    r"""SELECT /* ; CREATE TABLE {t} (a int); */ 1 AS a""",
    r"""SELECT /* /* nested */ ; CREATE TABLE {t} (a int); */ 1 AS a""",
    "SELECT 1 AS a -- ; CREATE TABLE {t} (a int)\n",
    r"""SELECT 'a\' AS a, '; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT 'a\\' AS a, '\'; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT U&'\0041' AS a, '; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT 'a' 'b' AS a""",
    r"""SELECT 1 AS "a"";CREATE TABLE {t} (a int);--" """,
    r"""SELECT N'a\' AS a, '; CREATE TABLE {t} (a int); --' AS b""",
    r"""SELECT B'1' AS a, X'1F' AS b""",
]

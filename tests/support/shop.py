"""A small shop database with one issue of each of several kinds, for the stage tests."""

from pathlib import Path

import duckdb

# events: 203 missing pages, 30 duplicate rows, 400 orphan customer ids, status spelled two ways
SHOP_SQL = """
CREATE TABLE customers AS SELECT range AS customer_id, 'c' || range AS name FROM range(200);
CREATE TABLE {name} AS
  SELECT range AS event_id,
         range % 250 AS customer_id,
         CASE WHEN range % 10 = 0 THEN NULL ELSE 'page' || (range % 7) END AS page,
         ['shipped', 'Shipped', 'pending', 'pending', 'shipped', 'pending'][range % 6 + 1] AS status,
         range % 5 AS x
  FROM range(2000);
INSERT INTO {name} SELECT * FROM {name} WHERE event_id < 30;
"""


def make_shop(path: Path, table: str = "events", *copies: str) -> Path:
    """The shop database at `path`, with `table` and, for transfer tests, copies of it."""
    with duckdb.connect(str(path)) as con:
        con.execute(SHOP_SQL.format(name=table))
        for other in copies:
            con.execute(f"CREATE TABLE {other} AS SELECT * FROM {table}")
    return path

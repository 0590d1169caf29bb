"""A shop database cataloged for real (the heuristic agent, the local sandbox): `events` references
`customers` (with orphans), and a third table has a name no asset key can hold as it is."""

from __future__ import annotations

from pathlib import Path

import duckdb

from shop import make_shop

ODD = "order-lines #2 (é)"
TABLES = ("customers", "events", ODD)


def make_cataloged_shop(root: Path, tables: tuple[str, ...] = TABLES) -> tuple[Path, Path]:
    """(database file, store folder), with `tables` cataloged."""
    from cataloger_dagster.cli.runner import catalog_database

    root.mkdir(parents=True, exist_ok=True)
    database, store = make_shop(root / "shop.duckdb"), root / "store"
    with duckdb.connect(str(database)) as con:
        con.execute(f'CREATE TABLE "{ODD}" AS SELECT range AS line_id, range % 9 AS qty FROM range(30)')
    report = catalog_database(database=f"duckdb://{database}", store=str(store), agent="heuristic",
                              sandbox="local", tables=list(tables))
    assert not report.failed, report.failed
    return database, store


def duckdb_tables(database: Path) -> dict[str, tuple[int, list[str]]]:
    """{table: (rows, column names)}, read straight from DuckDB."""
    with duckdb.connect(str(database), read_only=True) as con:
        names = [r[0] for r in con.sql("SELECT table_name FROM information_schema.tables").fetchall()]
        return {n: (con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0],
                    [c[0] for c in con.execute(f'DESCRIBE "{n}"').fetchall()]) for n in names}

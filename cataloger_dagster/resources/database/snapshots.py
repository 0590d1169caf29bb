"""A read-only copy of one table (or a seeded sample of a huge one) for the sandbox, which sees
it at /data (`SNAPSHOT_URL`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import ibis
from pydantic import BaseModel, Field

from cataloger_dagster.core import portable
from cataloger_dagster.core.redaction import scrub_secrets
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.database.connection import quote_identifier
from cataloger_dagster.resources.database.errors import DatabaseError

if TYPE_CHECKING:
    from cataloger_dagster.resources.database.resource import DatabaseResource

SNAPSHOT_FILE = "snapshot.duckdb"
# How code inside the sandbox reaches the snapshot, which it sees at /data.
SNAPSHOT_URL = f"duckdb:///data/{SNAPSHOT_FILE}?read_only=true"

log = logging.getLogger(__name__)


class Snapshot(BaseModel):
    """A read-only copy of one table for the sandbox."""

    path: str
    url: str  # ibis URL of the copy, as the sandbox will see it
    table: str
    rows: int
    source_rows: int
    sampled: bool
    seed: int | None = None
    # columns the copy holds as text (or leaves out: portable.LEFT_OUT), and why
    as_text: dict[str, str] = Field(default_factory=dict)


def write_snapshot(
    database: "DatabaseResource",
    name: str,
    dest_dir: str | os.PathLike,
    *,
    row_limit: int | None = None,
    references: dict[str, list[str]] | None = None,
) -> Snapshot:
    """Copy one table (or a seeded sample of a huge one) into a new DuckDB file.

    The copy has the same table name, so code written against the snapshot
    runs unchanged against the real database.  `references` adds the
    distinct key columns of other tables that checks join against (orphan
    references).  The file is made read-only.
    """
    limit = database.snapshot_row_limit if row_limit is None else row_limit
    table = database.table(name)
    total = int(table.count().execute())
    sampled = total > limit
    source = table
    if sampled:
        # oversample a little so the limit is reached, then cut exactly
        fraction = min(1.0, limit / total * 1.1)
        source = table.sample(fraction, seed=database.snapshot_seed).limit(limit)
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / SNAPSHOT_FILE
    if path.exists():
        raise DatabaseError(f"snapshot {path} already exists: use a fresh directory")
    # Types Arrow cannot carry (DuckDB's INTERVAL and UNION, PostgreSQL's ranges, mixed
    # SQLite columns...) go as text; a column that still fails is found and sent as text
    # too, and one that fails even as text is left out: never the whole table.
    # MySQL decimals wider than DuckDB's 38 digits go as exact text first
    source = _arrow_safe(source)
    view, as_text = portable.portable(source, portable.sqlite_mixed_reasons(table))
    try:
        _copy(view, path, name)
    except Exception:
        _remove_database(path)
        view, as_text = portable.portable(source, portable.retry_reasons(view, as_text))
        try:
            _copy(view, path, name)
        except Exception as exc:
            _remove_database(path)
            raise DatabaseError(
                f"table {name!r} cannot be copied for the sandbox even with its unusual columns "
                f"as text ({type(exc).__name__}: {scrub_secrets(str(exc), database.url).splitlines()[0][:200]})"
            ) from None
    for column, why in as_text.items():
        log.info(
            "snapshot of %s: column %r %s (%s)",
            visible(name),
            column,
            "left out" if why == portable.LEFT_OUT else "carried as text",
            why,
        )
    with duckdb.connect(str(path)) as out:
        rows = out.execute(f'SELECT count(*) FROM "{quote_identifier(name)}"').fetchone()[0]  # type: ignore[index]  # a count's row
        for other, columns in (references or {}).items():
            if other == name:
                continue
            keys, _ = portable.portable(database.table(other).select(*columns))
            keys = keys.distinct()
            out.register("snapshot_keys", keys.to_pyarrow_batches(chunk_size=100_000))
            out.execute(f'CREATE TABLE "{quote_identifier(other)}" AS SELECT * FROM snapshot_keys')
            out.unregister("snapshot_keys")
    # read-only; readable by others only where they can reach it (a sandbox's private
    # folder is 0700 and setgid to the sandbox's group, which then reads it)
    path.chmod(0o444 if dest.stat().st_mode & 0o005 == 0o005 else 0o440)
    return Snapshot(
        path=str(path),
        url=f"duckdb://{path}?read_only=true",
        table=name,
        rows=int(rows),
        source_rows=total,
        sampled=sampled,
        seed=database.snapshot_seed if sampled else None,
        as_text=as_text,
    )


def _copy(view: ibis.Table, path: Path, name: str) -> None:
    reader = view.to_pyarrow_batches(chunk_size=100_000)
    with duckdb.connect(str(path)) as out:
        out.register("snapshot_source", reader)
        out.execute(f'CREATE TABLE "{quote_identifier(name)}" AS SELECT * FROM snapshot_source')
        out.unregister("snapshot_source")


def _remove_database(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


# DuckDB's DECIMAL holds 38 digits; MySQL's holds 65
DUCKDB_MAX_DECIMAL_DIGITS = 38


def _arrow_safe(table: ibis.Table) -> ibis.Table:
    """`table` with the columns the DuckDB snapshot cannot hold carried as text (exact)."""
    wide = [
        name
        for name, dtype in table.schema().items()
        if dtype.is_decimal() and (dtype.precision or 0) > DUCKDB_MAX_DECIMAL_DIGITS
    ]
    return table.mutate(**{name: table[name].cast("string") for name in wide}) if wide else table

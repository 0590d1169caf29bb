"""Backend parity: the planted demo database in DuckDB, SQLite, PostgreSQL and MySQL/MariaDB
gives the same findings, affected row counts and health scores.

DuckDB, loaded the same way as the others, is the reference.  A failure lists every
difference, and the profile notes and detector warnings that explain it.
"""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb
import pyarrow as pa
import pytest
from backends import KINDS, load_tables
from degraded import grouped
from parity import Run, catalog, differences

pytestmark = [pytest.mark.postgres, pytest.mark.mysql, pytest.mark.slow]

REFERENCE = "duckdb"
EMPTY = "retired_feed"   # a table without rows: one finding of its own on every backend
# the detectors judge dates against "now": the same moment for every backend
NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def runs(demo_db, module_scratch) -> dict[str, Run]:
    with duckdb.connect(str(demo_db), read_only=True) as con:
        names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
        tables = {name: con.table(name).to_arrow_table() for name in names}
    tables[EMPTY] = pa.table({"feed_code": pa.array([], pa.string()), "loaded_at": pa.array([], pa.timestamp("us"))})
    return {kind: catalog(load_tables(kind, tables, module_scratch), now=NOW, database="demo")
            for kind in KINDS}


def test_the_reference_finds_the_planted_defects(runs):
    # a parity of nothing found would prove nothing
    assert len(runs[REFERENCE].findings) >= 10 and not runs[REFERENCE].problems, runs[REFERENCE].problems


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_table_is_one_empty_table_finding_on_every_backend(runs, kind):
    found = [(issue.type, issue.severity) for issue in runs[kind].issues[EMPTY]]
    assert found == [("empty_table", "medium")] and runs[kind].health[EMPTY] == 88.0


@pytest.mark.parametrize("kind", [k for k in KINDS if k != REFERENCE])
def test_same_findings_rows_and_health_as_duckdb(runs, kind):
    found = differences(runs[REFERENCE], runs[kind])
    assert not found, (
        f"{kind} differs from {REFERENCE} in {len(found)} ways:\n  " + "\n  ".join(found)
        + f"\nstatistics lost and detectors skipped in {kind}:\n  " + "\n  ".join(grouped(runs[kind].problems))
    )


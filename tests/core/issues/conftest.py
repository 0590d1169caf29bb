"""Small DuckDB tables for the detector tests: build one with SQL, profile it as the pipeline
does, and run one detector (or all of them) on it."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, Optional

import ibis
import pyarrow as pa
import pytest

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.issues.detectors.context import Context
from cataloger_dagster.core.models import Degradation, IssueModel, TableProfile
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


class Tables:
    """An in-memory DuckDB database whose tables are built by the test."""

    def __init__(self) -> None:
        self.con = ibis.duckdb.connect()
        self._profiles: dict[str, TableProfile] = {}

    def sql(self, statement: str) -> "Tables":
        self.con.raw_sql(statement)
        self._profiles.clear()
        return self

    def rows(self, name: str, columns: str, rows: list[tuple]) -> "Tables":
        """CREATE TABLE name (columns) and insert `rows` (for values SQL cannot generate easily)."""
        self.con.raw_sql(f"CREATE TABLE {name} ({columns})")
        if len(rows) > 1000:   # DuckDB's executemany takes a second per thousand rows; Arrow does not
            names = self.con.table(name).columns
            batch = pa.table({c: [r[i] for r in rows] for i, c in enumerate(names)})
            self.con.con.register("_rows", batch)
            self.con.con.execute(f"INSERT INTO {name} SELECT * FROM _rows")
            self.con.con.unregister("_rows")
        elif rows:
            marks = ", ".join("?" for _ in rows[0])
            self.con.con.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
        self._profiles.clear()
        return self

    def profile(self, name: str) -> TableProfile:
        if name not in self._profiles:
            table = self.con.table(name)
            self._profiles[name] = compute_profile(table, database="t", table_name=name,
                                                   fingerprint=compute_fingerprint(table))
        return self._profiles[name]

    def catalog(self) -> dict[str, ibis.Table]:
        return {n: self.con.table(n) for n in self.con.list_tables()}

    def context(self, name: str, *, catalog: bool = False, now: datetime = NOW,
                profiles: bool = False, shared: Optional[dict] = None) -> Context:
        cat = self.catalog() if catalog else {}
        stored = {n: self.profile(n) for n in cat} if profiles else {}
        return Context(self.con.table(name), self.profile(name), cat, now, stored,
                       shared={} if shared is None else shared)

    def check(self, check: Callable[..., Optional[IssueModel]], name: str, column: str,
              **kw) -> Optional[IssueModel]:
        """Run one column check on `name.column`, as detect_issues does."""
        ctx = self.context(name, **kw)
        cp = next(c for c in ctx.profile.columns if c.name == column)
        return check(ctx, cp, ctx.table.schema()[column])

    def detect(self, name: str, *, catalog: bool = False, now: datetime = NOW,
               degradations: Optional[list[Degradation]] = None,
               shared: Optional[dict] = None) -> dict[str, IssueModel]:
        """Every detector on `name`: issues by id."""
        cat = self.catalog() if catalog else None
        found = detect_issues(self.con.table(name), self.profile(name), catalog=cat, now=now,
                              degradations=degradations, shared=shared)
        return {i.id: i for i in found}


@pytest.fixture
def tables():
    t = Tables()
    yield t
    t.con.disconnect()

"""Run investigation checks the way the sandbox does: a session script (setup, helpers, the
checks the issues need, one `record` per issue) run by a fresh interpreter against a DuckDB file.

Used by the mirrored test of each check file (tests/core/investigate/checks/test_<type>.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from cataloger_dagster.core.investigate.code import (
    check_block,
    check_type,
    investigate_block,
    parse_records,
    setup_block,
)
from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER
from cataloger_dagster.core.models import IssueModel

# a small shop: one row twice (id 7), a placeholder, an outlier, case variants, bad e-mails,
# a constant column, negative quantities, a date in the future, references to absent customers
ORDERS_SQL = """
CREATE TABLE customers AS SELECT range AS id FROM range(10);
CREATE TABLE orders AS
  SELECT i AS id,
         i % 12 AS customer_id,
         CASE WHEN i % 10 = 0 THEN NULL WHEN i % 10 = 5 THEN '  ' ELSE 'note ' || i END AS note,
         CASE WHEN i % 4 = 0 THEN 'Shipped' WHEN i % 4 = 3 THEN 'pending' ELSE 'shipped' END AS status,
         CASE WHEN i = 50 THEN 100000.0 WHEN i = 60 THEN -999.0 ELSE i * 1.0 END AS amount,
         CAST(i * 7 AS VARCHAR) AS code,   -- numbers as text (leading zeros would make it a code)
         '2024-01-' || lpad(CAST(i % 28 + 1 AS VARCHAR), 2, '0') AS day,
         CASE WHEN i % 20 = 0 THEN 'nope' WHEN i = 33 THEN 'N/A' ELSE 'user' || i || '@example.com' END AS email,
         'NL' AS country,
         CASE WHEN i % 25 = 0 THEN -1 ELSE i END AS qty,
         CASE WHEN i = 99 THEN TIMESTAMP '2999-01-01' ELSE TIMESTAMP '2024-01-01' + INTERVAL (i) DAY END AS created
  FROM range(1, 101) t(i);
INSERT INTO orders SELECT * FROM orders WHERE id = 7;
"""


def database(path: Path, sql: str) -> Path:
    """A DuckDB file at `path` made by `sql`."""
    with duckdb.connect(str(path)) as con:
        con.execute(sql)
    return path


def scalar(db: Path, sql: str):
    """The first value of the first row `sql` returns, read from the file `db`."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def made(table: str, type_: str, columns: list[str], **details) -> IssueModel:
    """An issue of `type_` on `columns`, with the details a detector would have written."""
    return IssueModel(id=f"{table}_{type_}_{'_'.join(columns)}", type=type_, severity="medium",
                      description="", affectedColumns=columns, suggestedAction="", category="quick_fixes",
                      details=details)


def run_checks(db: Path | str, table: str, issues: list[IssueModel], folder: Path) -> dict[str, dict]:
    """Each issue's record ({"verdict", "reason", "evidence", ...} or {"error"}) by issue id, from a
    session script run by a fresh interpreter in `folder` against the DuckDB file `db` (or the
    database of the URL `db`)."""
    kinds = sorted({check_type(i) for i in issues})
    code = "\n".join([SCRIPT_HEADER, setup_block(table), *(check_block(k) for k in kinds),
                      *(investigate_block(i, issues) for i in issues)])
    return parse_records(run_code(code, db, folder))


def run_code(code: str, db: Path | str, folder: Path) -> str:
    """What `code` prints, run as the session script by a fresh interpreter in `folder` against
    the DuckDB file `db` or the database of the URL `db` (it must exit 0)."""
    script = folder / "catalog_script.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env["DB_CONNECTION_STRING"] = db if isinstance(db, str) else f"duckdb:///{db}"
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=folder, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return out.stdout

"""summary_script.py, the file: what `recent_changes.summary_script` makes of it.  A generated script
needs nothing but python, ibis and the database's driver; the same arguments give the same bytes;
and over two real profiles of a DuckDB table it judges every change as compare_runs does, since
both run the code of `comparison`.  (Its output on hand-made baselines is in test_recent_changes.py.)"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import ibis
import pytest

from cataloger_dagster.core.history import summary_script as script_file
from cataloger_dagster.core.history.recent_changes import RunResults, compare_runs, summary_script
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.models import NUMERIC_KINDS
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import column_kind, compute_profile

PREVIOUS_SQL = """
CREATE TABLE orders AS
  SELECT i AS id,
         i * 1.0 AS amount,
         CASE WHEN i % 10 = 0 THEN NULL ELSE 'note ' || i END AS note,
         5 AS qty,
         CAST(i / 4 AS DECIMAL(10, 2)) AS price,
         'x' AS legacy,
         i % 7 AS code
  FROM range(1, 101) t(i)
"""
# 20 rows fewer; amount moves by far more than its spread, qty stops being constant, note loses
# more values, price moves a little; legacy goes, code turns to text, added comes
CURRENT_SQL = [
    "DELETE FROM orders WHERE id > 80",
    "UPDATE orders SET amount = amount + 100",
    "UPDATE orders SET qty = 6 WHERE id = 1",
    "UPDATE orders SET note = NULL WHERE id % 3 = 0",
    "UPDATE orders SET price = price + 0.5 WHERE id = 2",
    "ALTER TABLE orders DROP COLUMN legacy",
    "ALTER TABLE orders ALTER code TYPE VARCHAR",
    "ALTER TABLE orders ADD COLUMN added DOUBLE DEFAULT 1.5",
]


def _profile(db: Path) -> TableProfile:
    con = ibis.duckdb.connect(str(db))
    try:
        table = con.table("orders")
        profile = compute_profile(table, database="shop", table_name="orders", fingerprint=compute_fingerprint(table))
        # as the store gives it back: through its JSON
        return TableProfile.model_validate_json(profile.model_dump_json())
    finally:
        con.disconnect()


def _run(code: str, db: Path, tmp_path: Path) -> dict:
    script = tmp_path / "summary_script.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CATALOGER_", "PYTHON"))}
    env["DB_CONNECTION_STRING"] = f"duckdb:///{db}"
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """(the DuckDB file as the current run found it, the previous run's profile, the current one's)."""
    db = tmp_path_factory.mktemp("orders") / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(PREVIOUS_SQL)
    previous = _profile(db)
    with duckdb.connect(str(db)) as con:
        for statement in CURRENT_SQL:
            con.execute(statement)
    return db, previous, _profile(db)


def test_the_script_judges_every_change_as_compare_runs_does(two_runs, tmp_path):
    db, previous, current = two_runs
    summary = compare_runs(RunResults("T1", previous), RunResults("T2", current))
    out = _run(summary_script("orders", previous, previous_timestamp="T1"), db, tmp_path)

    assert out["rows"] == {"before": summary.rows_before, "after": summary.rows_after,
                           "delta": summary.rows_delta, "delta_pct": summary.rows_delta_pct} \
        == {"before": 100, "after": 80, "delta": -20, "delta_pct": -20.0}
    assert out["schema"] == {
        "added": [c.model_dump() for c in summary.columns_added],
        "removed": [c.model_dump() for c in summary.columns_removed],
        "type_changed": [t.model_dump() for t in summary.type_changes],
    }
    assert [c["name"] for c in out["schema"]["added"]] == ["added"]
    assert [c["name"] for c in out["schema"]["removed"]] == ["legacy"]
    assert [t["column"] for t in out["schema"]["type_changed"]] == ["code"]

    shifts = {s.column: s for s in summary.distributions}

    def notable(column: str, what: str) -> bool:
        return column in shifts and any(why.startswith(what) for why in shifts[column].notable)

    kept = [name for name in current_columns(current) if name in current_columns(previous)]
    script = {name: out["columns"].get(name, {}) for name in kept}
    assert {n: script[n].get("nulls", {}).get("notable", False) for n in kept} \
        == {n: notable(n, "null fraction") for n in kept}
    assert {n: script[n].get("mean", {}).get("notable", False) for n in kept} \
        == {n: notable(n, "mean") for n in kept}
    # the judgements are not all alike: each kind of move is met, and a move that is no news too
    assert notable("note", "null fraction") and notable("amount", "mean") and notable("qty", "mean")
    assert "the column was constant" in " ".join(shifts["qty"].notable)
    assert "mean" in script["price"] and not script["price"]["mean"]["notable"] and not notable("price", "mean")


def current_columns(profile: TableProfile) -> list[str]:
    return [c.name for c in profile.columns]


def test_the_same_arguments_give_the_same_bytes_in_any_interpreter(two_runs):
    _, previous, _ = two_runs
    trend = [RunSummary(timestamp=f"2026-01-0{i}T00:00:00.000000Z", rows=100 * i, issue_ids=["a"] * i,
                        severities={"high": i}, health=90.0 - i, pass_rate=None if i == 2 else 0.5)
             for i in (1, 2, 3)]
    arguments = ("orders\u2028x", previous)
    code = summary_script(*arguments, previous_timestamp="T1", trend=trend)
    assert summary_script(*arguments, previous_timestamp="T1", trend=trend) == code
    again = subprocess.run(
        [sys.executable, "-c",
         "import json, sys\n"
         "from cataloger_dagster.core.history.recent_changes import summary_script\n"
         "from cataloger_dagster.core.history.timelapse import RunSummary\n"
         "from cataloger_dagster.core.models import TableProfile\n"
         "table, previous, trend = json.load(sys.stdin)\n"
         "previous = TableProfile.model_validate(previous)\n"
         "trend = [RunSummary(**r) for r in trend]\n"
         "sys.stdout.buffer.write(summary_script(table, previous, previous_timestamp='T1', trend=trend).encode())\n"],
        input=json.dumps([arguments[0], previous.model_dump(mode="json"), [r.model_dump() for r in trend]]),
        capture_output=True,
        text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert again.returncode == 0, again.stderr
    assert again.stdout == code


def test_a_generated_script_imports_nothing_but_python_and_ibis(two_runs):
    _, previous, _ = two_runs
    tree = ast.parse(summary_script("orders", previous, previous_timestamp="T1"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"json", "math", "os", "ibis"}


def _declared(tree: ast.Module) -> dict[str, str]:
    return {node.target.id: ast.unparse(node.annotation) for node in tree.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def test_a_generated_script_defines_what_the_file_declares():
    """The file's stand-ins (for linters and readers) and the generated values agree on names and types."""
    declared = _declared(ast.parse(Path(script_file.__file__).read_text(encoding="utf-8")))
    generated = ast.parse(summary_script("orders", None))
    assert _declared(generated) == declared
    assert set(declared) == {"TABLE", "PREVIOUS_TIMESTAMP", "PREVIOUS", "TREND", "NUMERIC_KINDS"}


def test_the_numeric_kinds_are_the_profiles_and_the_script_names_kinds_as_the_profiler_does():
    scope: dict = {"__name__": "generated"}
    exec(compile(summary_script("orders", None), "summary_script.py", "exec"), scope)
    assert scope["NUMERIC_KINDS"] == tuple(NUMERIC_KINDS)
    for dtype in ("int8", "int64", "uint16", "float32", "float64", "decimal(10, 2)", "boolean", "string", "date"):
        parsed = ibis.dtype(dtype)
        expected = column_kind(parsed)
        assert scope["kind"](parsed) == (expected if expected in (*NUMERIC_KINDS, "boolean") else "other"), dtype

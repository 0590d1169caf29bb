"""recent_summary: compare_runs on hand-built runs, and the asset end to end over two runs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.core.history.recent_changes import compare_runs, render_recent_summary, summary_script

# ---------------------------------------------------------------------------
# hand-built runs
# ---------------------------------------------------------------------------


def _col(name, dtype="int64", kind="integer", nulls=0, rows=100, **stats):
    return {"name": name, "dtype": dtype, "kind": kind, "count": rows - nulls, "nulls": nulls,
            "null_fraction": nulls / rows if rows else 0.0, **stats}


def _run(ts, rows, columns, issues=None, verdicts=None, fingerprint=None):
    run = {
        "timestamp": ts,
        "profile": {"database": "db", "table": "orders", "row_count": rows, "column_count": len(columns),
                    "columns": columns, "fingerprint": {"value": fingerprint or f"fp-{rows}"}},
    }
    if issues is not None:
        run["issues"] = {"issues": [{"id": i, "type": i.split(":")[0], "severity": sev,
                                     "description": f"issue {i}", "affectedColumns": ["amount"]}
                                    for i, sev in issues.items()], "summary": "", "completedAt": ""}
    if verdicts is not None:
        run["investigations"] = {"table": "orders", "investigations": [
            {"code": "", "success": v != "error", "output": None, "issue_id": i,
             "verdict": None if v == "error" else v} for i, v in verdicts.items()]}
    return run


BASE_COLUMNS = [
    _col("id", "!int64", top_values=[{"value": 1, "count": 1}]),
    _col("amount", "float64", "float", nulls=2, mean=50.0, std=10.0, min=1.0, max=99.0),
    _col("status", "string", "string", top_values=[{"value": "paid", "count": 60},
                                                   {"value": "open", "count": 40}]),
    _col("legacy", "string", "string"),
]


def test_first_run_says_so():
    s = compare_runs(None, _run("T2", 100, BASE_COLUMNS, issues={"a": "low"}, verdicts={"a": "confirmed"}))
    assert s.first_run and s.previous_timestamp is None
    assert s.rows_after == 100 and s.rows_delta == 0
    assert [c.name for c in s.columns_added] == ["id", "amount", "status", "legacy"]
    assert not s.issues_new and not s.issues_resolved and not s.verdict_changes
    assert "first run" in s.headline[0].lower()
    html = render_recent_summary(s)
    assert "first run" in html.lower() and 'href="catalog.html"' in html


def test_unchanged_runs_report_nothing():
    before = _run("T1", 100, BASE_COLUMNS, issues={"a": "low"}, verdicts={"a": "confirmed"})
    after = copy.deepcopy(before)
    after["timestamp"] = "T2"
    s = compare_runs(before, after)
    assert not s.first_run and s.unchanged
    assert s.rows_delta == 0 and s.schema_changes == 0 and not s.distributions
    assert s.headline[-1] == "Nothing changed since the previous run."


def test_rows_changed():
    s = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 125, BASE_COLUMNS))
    assert (s.rows_before, s.rows_after, s.rows_delta, s.rows_delta_pct) == (100, 125, 25, 25.0)
    assert s.fingerprint_changed
    assert any("100 → 125 (+25, +25.0%)" in line for line in s.headline)
    # issues.json missing on both sides: unknown, not "nothing resolved"
    assert not s.issues_compared and not s.verdicts_compared


def test_rows_from_an_empty_table_have_no_percentage():
    s = compare_runs(_run("T1", 0, BASE_COLUMNS), _run("T2", 10, BASE_COLUMNS))
    assert s.rows_delta == 10 and s.rows_delta_pct is None


def test_column_added_dropped_and_retyped():
    after_cols = [c for c in copy.deepcopy(BASE_COLUMNS) if c["name"] != "legacy"]
    after_cols[0]["dtype"] = "!string"
    after_cols.append(_col("city", "string", "string", nulls=100))
    s = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, after_cols))
    assert [(c.name, c.dtype) for c in s.columns_added] == [("city", "string")]
    assert [(c.name, c.dtype) for c in s.columns_removed] == [("legacy", "string")]
    assert [(t.column, t.before, t.after) for t in s.type_changes] == [("id", "!int64", "!string")]
    assert s.schema_changes == 3
    text = " ".join(s.headline)
    assert "city added" in text and "legacy removed" in text and "!int64 → !string" in text


def test_distribution_shifts_are_flagged_when_notable():
    after_cols = copy.deepcopy(BASE_COLUMNS)
    amount = after_cols[1]
    amount.update(nulls=9, null_fraction=0.09, mean=65.0)       # +7 points, 1.5 std
    after_cols[2]["top_values"] = [{"value": "open", "count": 70}, {"value": "void", "count": 30}]
    s = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, after_cols))
    shifts = {d.column: d for d in s.distributions}
    assert set(shifts) == {"amount", "status"}
    notes = " ".join(shifts["amount"].notable)
    assert "null fraction" in notes and "+7.0 points" in notes and "1.5 std" in notes
    assert shifts["status"].top_entered == ["void"] and shifts["status"].top_left == ["paid"]
    assert any("most frequent value" in n for n in shifts["status"].notable)

    # a small move is reported but not flagged
    small = copy.deepcopy(BASE_COLUMNS)
    small[1].update(nulls=3, null_fraction=0.03, mean=52.0)
    quiet = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, small))
    assert [d.column for d in quiet.distributions] == ["amount"]
    assert quiet.distributions[0].notable == []
    assert {c.stat for c in quiet.distributions[0].changes} == {"null_fraction", "mean"}


def test_distinct_counts_are_judged_against_the_row_count():
    def cols(id_distinct, status_distinct, rows):
        out = copy.deepcopy(BASE_COLUMNS)
        out[0].update(distinct=id_distinct)
        out[2].update(distinct=status_distinct)
        out[0]["top_values"] = [{"value": 20, "count": 1}]
        return out
    before = _run("T1", 100, cols(100, 2, 100))
    after = _run("T2", 200, cols(200, 5, 200))
    after["profile"]["columns"][0]["top_values"] = [{"value": 20.0, "count": 1}]   # retyped to float
    shifts = {d.column: d for d in compare_runs(before, after).distributions}
    assert shifts["id"].notable == [] and not shifts["id"].top_entered   # a key growing with its table
    assert any("distinct values 2 → 5" in n for n in shifts["status"].notable)


def test_one_odd_column_does_not_hide_the_others():
    after_cols = copy.deepcopy(BASE_COLUMNS)
    after_cols[2]["top_values"] = "not a list"      # broken stored JSON
    after_cols[1]["mean"] = 90.0
    s = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, after_cols))
    shifts = {d.column: d for d in s.distributions}
    assert shifts["status"].error and "status" in shifts["status"].error
    assert shifts["amount"].notable


def test_issues_new_resolved_severity_and_verdicts():
    before = _run("T1", 100, BASE_COLUMNS, issues={"old": "high", "kept": "low", "moved": "low"},
                  verdicts={"old": "confirmed", "kept": "confirmed", "moved": "inconclusive"})
    after = _run("T2", 100, BASE_COLUMNS, issues={"kept": "low", "moved": "high", "fresh": "medium"},
                 verdicts={"kept": "refuted", "moved": "error", "fresh": "confirmed"})
    s = compare_runs(before, after)
    assert [i.id for i in s.issues_new] == ["fresh"] and s.issues_new[0].severity == "medium"
    assert [i.id for i in s.issues_resolved] == ["old"]
    assert [(c.id, c.before, c.after) for c in s.severity_changes] == [("moved", "low", "high")]
    assert [(v.issue_id, v.before, v.after) for v in s.verdict_changes] == [
        ("kept", "confirmed", "refuted"), ("moved", "inconclusive", "error")]
    html = render_recent_summary(s)
    assert "fresh" in html and "confirmed → refuted" in html


def test_compare_runs_rejects_a_run_without_profile():
    with pytest.raises(ValueError, match="profile"):
        compare_runs(None, {"timestamp": "T2"})
    with pytest.raises(ValueError, match="orders"):
        compare_runs({"timestamp": "T1"}, _run("T2", 1, BASE_COLUMNS))


def test_page_escapes_values():
    cols = [_col("<script>alert(1)</script>", "string", "string")]
    s = compare_runs(_run("T1", 1, []), _run("T2", 1, cols))
    html = render_recent_summary(s)
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_summary_script_is_valid_python_for_any_table_name():
    for name in ['plain', 'we"ird\'name', 'back\\slash """ x', "ünïcode"]:
        code = summary_script(name, {"row_count": 1, "columns": [_col("a")]}, previous_timestamp="T1")
        compile(code, "summary_script.py", "exec")
        scope: dict = {}
        exec(compile(code.replace('if __name__ == "__main__":', "if False:"), "s", "exec"), scope)
        assert scope["TABLE"] == name and scope["PREVIOUS"]["row_count"] == 1


# ---------------------------------------------------------------------------
# end to end: two runs over a real DuckDB file
# ---------------------------------------------------------------------------


class _Page(HTMLParser):
    """Text of elements with an id, and the schema table's rows by their change."""

    def __init__(self):
        super().__init__()
        self.by_id: dict[str, str] = {}
        self.attrs_by_id: dict[str, dict] = {}
        self.schema_rows: list[tuple[str, list[str]]] = []
        self.hrefs: list[str] = []
        self._open: list[list] = []     # [tag, id, text parts]
        self._row: list | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag in ("meta", "link", "br", "img", "input"):
            return
        self._open.append([tag, a.get("id"), []])
        if a.get("id"):
            self.attrs_by_id[a["id"]] = a
        if tag == "tr" and a.get("data-change"):
            self._row = [a["data-change"], []]
        if tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        while self._open:
            t, ident, parts = self._open.pop()
            if ident:
                self.by_id[ident] = " ".join("".join(parts).split())
            if self._open:
                self._open[-1][2].extend(parts)
            if t == tag:
                break
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row[1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.schema_rows.append((self._row[0], self._row[1]))
            self._row = None

    def handle_data(self, data):
        if self._open:
            self._open[-1][2].append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _make_table(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE people AS
        SELECT i AS id,
               'name ' || i AS name,
               20 + (i % 50) AS age,
               CASE WHEN i % 2 = 0 THEN NULL ELSE 'nick' || i END AS nickname,
               (i % 10)::DOUBLE AS score
        FROM range(1, 201) t(i)
    """)
    con.close()


def _change_table(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("""
        INSERT INTO people (id, name, age, nickname, score)
        SELECT i, 'name ' || i, 20 + (i % 50), 'nick' || i, 500.0 FROM range(201, 251) t(i)
    """)
    con.execute("ALTER TABLE people DROP COLUMN nickname")
    con.execute("ALTER TABLE people ADD COLUMN city VARCHAR")
    con.execute("ALTER TABLE people ALTER age TYPE DOUBLE")
    con.close()


def _run_script(script: Path, db: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env["DB_CONNECTION_STRING"] = f"duckdb:///{db}"
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=script.parent,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_recent_summary_over_two_runs(tmp_path):
    from cataloger_dagster.definitions import TABLE_ASSETS
    from cataloger_dagster.settings import resources

    db = tmp_path / "people.duckdb"
    _make_table(db)
    store_root = tmp_path / "store"
    res = resources(database=f"duckdb://{db}", store=str(store_root))
    run_config = {"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}}
    with dg.instance_for_test() as instance, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        instance.add_dynamic_partitions("tables", ["people"])
        first = dg.materialize(TABLE_ASSETS, partition_key="people", instance=instance, resources=res,
                               run_config=run_config)
        assert first.success
        (run1,) = sorted((store_root / "people" / "people").iterdir())
        page1 = _parse((run1 / "recent_summary.html").read_text())
        assert "first-run" in page1.by_id and "first run" in page1.by_id["first-run"].lower()
        assert "catalog.html" in page1.hrefs
        meta1 = first.asset_materializations_for_node("recent_summary")[0].metadata
        assert meta1["first_run"].value is True and meta1["issues_new"].value == 0
        # the first run's script only reports the current numbers
        out1 = _run_script(run1 / "summary_script.py", db)
        assert out1["first_run"] is True and out1["rows"]["after"] == 200
        assert out1["columns"]["nickname"]["nulls"] == 100

        run1_files = {p.name: p.read_bytes() for p in run1.iterdir()}
        _change_table(db)
        second = dg.materialize(TABLE_ASSETS, partition_key="people", instance=instance, resources=res,
                                run_config=run_config)
        assert second.success
    bad = [w for w in caught if issubclass(w.category, (DeprecationWarning, dg.BetaWarning, dg.PreviewWarning))]
    assert not bad, [str(w.message) for w in bad]

    runs = sorted((store_root / "people" / "people").iterdir())
    assert len(runs) == 2 and runs[0] == run1
    run2 = runs[1]
    html = (run2 / "recent_summary.html").read_text()
    page = _parse(html)
    assert page.by_id["previous-run"] == run1.name and page.by_id["current-run"] == run2.name
    assert page.attrs_by_id["rows-delta"]["data-delta"] == "50"
    assert "+25.0%" in page.by_id["rows-delta"]
    assert page.by_id["schema-changes"] == "3"
    changes = {(kind, cells[0]): cells for kind, cells in page.schema_rows}
    assert set(changes) == {("added", "city"), ("removed", "nickname"), ("type_changed", "age")}
    assert changes[("type_changed", "age")][2:] == ["int64", "float64"]
    assert page.attrs_by_id["fingerprint"]["data-changed"] == "true"
    # nickname's missing values left with the column; city is wholly missing now
    assert "people_missing_values_nickname" in page.by_id["issues-resolved-list"]
    assert "people_missing_values_city" in page.by_id["issues-new-list"]
    assert "score" in html and "std" in html      # the mean of score jumped by far more than 1 std
    assert "catalog.html" in page.hrefs and "summary_script.py" in page.hrefs

    meta = second.asset_materializations_for_node("recent_summary")[0].metadata
    assert meta["first_run"].value is False
    assert meta["rows_delta"].value == 50 and meta["schema_changes"].value == 3
    assert meta["issues_resolved"].value >= 1 and meta["issues_new"].value >= 1
    assert meta["recent_summary"].value == str(run2 / "recent_summary.html")
    # the first run's files are untouched
    assert {p.name: p.read_bytes() for p in run1.iterdir()} == run1_files

    # the stored script, run by hand against the database itself, agrees with the page
    out = _run_script(run2 / "summary_script.py", db)
    assert out["first_run"] is False and out["previous_timestamp"] == run1.name
    assert out["rows"] == {"before": 200, "after": 250, "delta": 50, "delta_pct": 25.0}
    assert [c["name"] for c in out["schema"]["added"]] == ["city"]
    assert [c["name"] for c in out["schema"]["removed"]] == ["nickname"]
    assert [(c["column"], c["before"], c["after"]) for c in out["schema"]["type_changed"]] == [
        ("age", "int64", "float64")]
    assert out["columns"]["score"]["mean"]["notable"] is True
    assert out["columns"]["score"]["mean"]["after"] == pytest.approx((200 * 4.5 + 50 * 500) / 250)

"""`recent_changes`: compare_runs on hand-built runs, the page it renders, and summary_script,
run against a real DuckDB file.  (The recent_summary asset over two real runs is in
tests/assets/test_recent_summary.py.)"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import duckdb
import pytest

from cataloger_dagster.core.history.recent_changes import RunResults, compare_runs, summary_script
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.render.recent_summary import render_recent_summary

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


def _profile(rows, columns, fingerprint=None, table="orders"):
    return TableProfile.model_validate({
        "database": "db", "table": table, "row_count": rows, "column_count": len(columns), "columns": columns,
        "sample_rows": [], "fingerprint": {"schema_hash": "", "row_count": rows, "value": fingerprint or f"fp-{rows}"}})


ISSUE_DEFAULTS = {"type": "", "severity": "low", "description": "", "affectedColumns": [], "suggestedAction": "",
                  "category": "quick_fixes"}


def _typed(run):
    """A hand-built run (a dict, as the tests change it) as the results' models compare_runs reads."""
    if run is None:
        return None
    p = run.get("profile")
    issues = run.get("issues")
    if issues is not None:
        issues = {**issues, **{k: [{**ISSUE_DEFAULTS, **i} for i in issues.get(k, [])]
                               for k in ("issues", "reviewed", "quieted")}}
    found = run.get("investigations")
    return RunResults(
        timestamp=run["timestamp"],
        profile=_profile(p["row_count"], p["columns"], p["fingerprint"]["value"], p["table"]) if p else None,
        issues=AnalysisResultModel.model_validate(issues) if issues is not None else None,
        investigations=InvestigationsResult.model_validate(found) if found is not None else None,
    )


def compare(previous, current, **kwargs):
    return compare_runs(_typed(previous), _typed(current), **kwargs)


BASE_COLUMNS = [
    _col("id", "!int64", top_values=[{"value": 1, "count": 1}]),
    _col("amount", "float64", "float", nulls=2, mean=50.0, std=10.0, min=1.0, max=99.0),
    _col("status", "string", "string", top_values=[{"value": "paid", "count": 60},
                                                   {"value": "open", "count": 40}]),
    _col("legacy", "string", "string"),
]


def test_first_run_says_so():
    s = compare(None, _run("T2", 100, BASE_COLUMNS, issues={"a": "low"}, verdicts={"a": "confirmed"}))
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
    s = compare(before, after)
    assert not s.first_run and s.unchanged
    assert s.rows_delta == 0 and s.schema_changes == 0 and not s.distributions
    assert s.headline[-1] == "Nothing changed since the previous run."


def test_rows_changed():
    s = compare(_run("T1", 100, BASE_COLUMNS), _run("T2", 125, BASE_COLUMNS))
    assert (s.rows_before, s.rows_after, s.rows_delta, s.rows_delta_pct) == (100, 125, 25, 25.0)
    assert s.fingerprint_changed
    assert any("100 → 125 (+25, +25.0%)" in line for line in s.headline)
    # issues.json missing on both sides: unknown, not "nothing resolved"
    assert not s.issues_compared and not s.verdicts_compared


def test_rows_from_an_empty_table_have_no_percentage():
    s = compare(_run("T1", 0, BASE_COLUMNS), _run("T2", 10, BASE_COLUMNS))
    assert s.rows_delta == 10 and s.rows_delta_pct is None


def test_column_added_dropped_and_retyped():
    after_cols = [c for c in copy.deepcopy(BASE_COLUMNS) if c["name"] != "legacy"]
    after_cols[0]["dtype"] = "!string"
    after_cols.append(_col("city", "string", "string", nulls=100))
    s = compare(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, after_cols))
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
    s = compare(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, after_cols))
    shifts = {d.column: d for d in s.distributions}
    assert set(shifts) == {"amount", "status"}
    notes = " ".join(shifts["amount"].notable)
    assert "null fraction" in notes and "+7.0 points" in notes and "1.5 std" in notes
    assert shifts["status"].top_entered == ["void"] and shifts["status"].top_left == ["paid"]
    assert any("most frequent value" in n for n in shifts["status"].notable)

    # a small move is reported but not flagged
    small = copy.deepcopy(BASE_COLUMNS)
    small[1].update(nulls=3, null_fraction=0.03, mean=52.0)
    quiet = compare(_run("T1", 100, BASE_COLUMNS), _run("T2", 100, small))
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
    shifts = {d.column: d for d in compare(before, after).distributions}
    assert shifts["id"].notable == [] and not shifts["id"].top_entered   # a key growing with its table
    assert any("distinct values 2 → 5" in n for n in shifts["status"].notable)


def test_one_odd_column_does_not_hide_the_others():
    after_cols = copy.deepcopy(BASE_COLUMNS)
    after_cols[1]["mean"] = 90.0
    after = _typed(_run("T2", 100, after_cols))
    after.profile.columns[2].top_values = "not a list"      # a value no profile could hold
    s = compare_runs(_typed(_run("T1", 100, BASE_COLUMNS)), after)
    shifts = {d.column: d for d in s.distributions}
    assert shifts["status"].error and "status" in shifts["status"].error
    assert shifts["amount"].notable


def test_issues_new_resolved_severity_and_verdicts():
    before = _run("T1", 100, BASE_COLUMNS, issues={"old": "high", "kept": "low", "moved": "low"},
                  verdicts={"old": "confirmed", "kept": "confirmed", "moved": "inconclusive"})
    after = _run("T2", 100, BASE_COLUMNS, issues={"kept": "low", "moved": "high", "fresh": "medium"},
                 verdicts={"kept": "refuted", "moved": "error", "fresh": "confirmed"})
    s = compare(before, after)
    assert [i.id for i in s.issues_new] == ["fresh"] and s.issues_new[0].severity == "medium"
    assert [i.id for i in s.issues_resolved] == ["old"]
    assert [(c.id, c.before, c.after) for c in s.severity_changes] == [("moved", "low", "high")]
    assert [(v.issue_id, v.before, v.after) for v in s.verdict_changes] == [
        ("kept", "confirmed", "refuted"), ("moved", "inconclusive", "error")]
    html = render_recent_summary(s)
    assert "fresh" in html and "confirmed → refuted" in html


def test_an_issue_set_aside_by_a_review_is_not_resolved():
    before = _run("T1", 100, BASE_COLUMNS, issues={"dismissed": "high", "fixed": "low"})
    after = _run("T2", 100, BASE_COLUMNS, issues={})
    after["issues"]["reviewed"] = [{"id": "dismissed", "type": "dismissed", "severity": "high"}]
    assert [i.id for i in compare(before, after).issues_resolved] == ["fixed"]


def test_compare_runs_rejects_a_run_without_profile():
    with pytest.raises(ValueError, match="profile"):
        compare(None, {"timestamp": "T2"})
    with pytest.raises(ValueError, match="orders"):
        compare({"timestamp": "T1"}, _run("T2", 1, BASE_COLUMNS))


def test_summary_script_is_valid_python_for_any_table_name():
    for name in ['plain', 'we"ird\'name', 'back\\slash """ x', "ünïcode"]:
        code = summary_script(name, _profile(1, [_col("a")]), previous_timestamp="T1")
        compile(code, "summary_script.py", "exec")
        scope: dict = {}
        exec(compile(code.replace('if __name__ == "__main__":', "if False:"), "s", "exec"), scope)
        assert scope["TABLE"] == name and scope["PREVIOUS"]["row_count"] == 1


# ---------------------------------------------------------------------------
# compare_runs: thresholds and partial runs
# ---------------------------------------------------------------------------


def _amount_after(before=None, **changes):
    start = copy.deepcopy(BASE_COLUMNS)
    start[1].update(before or {})
    cols = copy.deepcopy(start)
    cols[1].update(changes)
    return compare(_run("T1", 100, start), _run("T2", 100, cols))


def test_null_fraction_is_notable_from_five_points():
    # 25% -> 30% is exactly 5 points, which float subtraction puts a hair under 0.05
    assert 0.30 - 0.25 < 0.05
    notable = _amount_after({"null_fraction": 0.25}, null_fraction=0.30).distributions[0].notable
    assert notable == ["null fraction 25.0% → 30.0% (+5.0 points)"]
    assert not _amount_after({"null_fraction": 0.25}, null_fraction=0.299).distributions[0].notable
    # a drop counts as much as a rise
    assert _amount_after({"null_fraction": 0.30}, null_fraction=0.20).distributions[0].notable == [
        "null fraction 30.0% → 20.0% (-10.0 points)"]


def test_mean_is_notable_beyond_one_previous_std_or_when_a_constant_column_moves():
    assert not _amount_after(mean=60.0).distributions[0].notable          # exactly 1 std: not beyond
    assert _amount_after(mean=38.0).distributions[0].notable == ["mean 50 → 38 (1.2 std)"]
    before = copy.deepcopy(BASE_COLUMNS)
    before[1].update(std=0.0)
    after = copy.deepcopy(before)
    after[1].update(mean=50.5)
    s = compare(_run("T1", 100, before), _run("T2", 100, after))
    assert s.distributions[0].notable == ["mean 50 → 50.5 (the column was constant)"]
    assert "Column amount: mean 50 → 50.5 (the column was constant)." in s.headline
    # non-finite statistics are reported, never judged (a mean stored as text reads as its number)
    s = _amount_after(mean=float("inf"), null_fraction=float("nan"))
    assert s.distributions[0].notable == [] and {c.stat for c in s.distributions[0].changes} == {
        "mean", "null_fraction"}


def test_top_values_compare_numbers_by_value_and_keep_booleans_apart():
    before = copy.deepcopy(BASE_COLUMNS)
    before[0]["top_values"] = [{"value": 1, "count": 5}, {"value": {"k": [1, 2]}, "count": 2}]
    after = copy.deepcopy(BASE_COLUMNS)
    # True is not the number 1 (a column retyped to boolean changed its values); a dict is compared as JSON
    after[0]["top_values"] = [{"value": True, "count": 5}, {"value": {"k": [1, 2]}, "count": 2}]
    shift = compare(_run("T1", 100, before), _run("T2", 100, after)).distributions[0]
    assert shift.top_entered == [True] and shift.top_left == [1]
    assert shift.notable == ["most frequent value 1 → True"]


def test_a_fingerprint_change_alone_is_reported():
    s = compare(_run("T1", 100, BASE_COLUMNS, fingerprint="a"), _run("T2", 100, BASE_COLUMNS, fingerprint="b"))
    assert s.fingerprint_changed and not s.unchanged and s.rows_delta == 0
    assert s.headline == ["Row count unchanged (100).",
                          "The fingerprint changed (the data was updated) though rows and schema did not."]


def test_issues_and_verdicts_are_compared_only_when_both_runs_have_them():
    with_issues = _run("T1", 100, BASE_COLUMNS, issues={"a": "low"}, verdicts={"a": "confirmed"})
    without = _run("T2", 100, BASE_COLUMNS)
    for before, after in ((with_issues, without), (without, with_issues)):
        s = compare(before, after)
        assert not s.issues_compared and not s.verdicts_compared
        assert s.issues_new == s.issues_resolved == [] and s.unchanged
    # a check that ran but reached no verdict is told apart from one that failed
    after = _run("T2", 100, BASE_COLUMNS, issues={"a": "low"}, verdicts={"a": "confirmed"})
    after["investigations"]["investigations"][0].update(verdict=None, success=True)
    s = compare(with_issues, after)
    assert s.verdicts_compared and [(v.before, v.after) for v in s.verdict_changes] == [("confirmed", "no verdict")]


# ---------------------------------------------------------------------------
# summary_script, run against a real DuckDB file
# ---------------------------------------------------------------------------

PRICES_SQL = """
CREATE TABLE prices AS
  SELECT i AS id,
         CASE WHEN i % 4 = 0 THEN NULL ELSE 'n' || i END AS label,
         CAST(i AS DECIMAL(10, 2)) AS price,
         CASE WHEN i = 1 THEN 'NaN'::DOUBLE ELSE 7.0 END AS rate
  FROM range(1, 41) t(i)
"""


def _prices(tmp_path):
    db = tmp_path / "prices.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(PRICES_SQL)
    return db


def _run_summary(code: str, db, tmp_path) -> dict:
    script = tmp_path / "summary_script.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env["DB_CONNECTION_STRING"] = f"duckdb:///{db}"
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_summary_script_on_a_first_run_reports_the_current_numbers(tmp_path):
    db = _prices(tmp_path)
    out = _run_summary(summary_script("prices", None), db, tmp_path)
    assert out["first_run"] is True and out["previous_timestamp"] is None
    assert out["rows"] == {"before": None, "after": 40, "delta": 0, "delta_pct": None}
    cols = out["columns"]
    assert cols["label"] == {"dtype": "string", "nulls": 10}
    assert cols["price"]["mean"] == pytest.approx(20.5)          # a decimal column, averaged as float
    # the NaN in rate is not NULL, and not part of the mean either
    assert cols["rate"]["nulls"] == 0 and cols["rate"]["mean"] == pytest.approx(7.0)
    assert "mean" not in cols["label"]


def test_summary_script_compares_with_the_previous_profile_it_holds(tmp_path):
    db = _prices(tmp_path)
    previous = _profile(50, [
        _col("id", "int64", rows=50, mean=25.5, std=14.4),
        _col("label", "string", "string", nulls=1, rows=50, mean=3.0),      # a text column: no mean kept
        _col("price", "int64", "integer", rows=50, mean=20.5, std=float("nan")),
        _col("rate", "float64", "float", rows=50, mean=7.0, std=0.0),
        _col("gone", "string", "string", rows=50),
    ])
    code = summary_script("prices", previous, previous_timestamp="2026-01-01T00:00:00.000000Z")
    # the embedded baseline is what the previous profile says, with non-finite numbers as null
    scope: dict = {}
    exec(compile(code.replace('if __name__ == "__main__":', "if False:"), "s", "exec"), scope)
    baseline = scope["PREVIOUS"]["columns"]
    assert baseline["price"] == {"dtype": "int64", "nulls": 0, "mean": 20.5, "std": None}
    assert baseline["label"] == {"dtype": "string", "nulls": 1}

    out = _run_summary(code, db, tmp_path)
    assert out["first_run"] is False and out["previous_timestamp"] == "2026-01-01T00:00:00.000000Z"
    assert out["rows"] == {"before": 50, "after": 40, "delta": -10, "delta_pct": -20.0}
    assert out["schema"]["added"] == []
    assert out["schema"]["removed"] == [{"name": "gone", "dtype": "string"}]
    assert out["schema"]["type_changed"] == [{"column": "price", "before": "int64", "after": "decimal(10, 2)"}]
    # label: 1 of 50 missing before, 10 of 40 now: +23 points
    assert out["columns"]["label"]["nulls"] == {"before": 1, "after": 10, "null_fraction_points": 23.0,
                                                "notable": True}
    assert out["columns"]["id"]["mean"] == {"before": 25.5, "after": 20.5, "notable": False}
    # price's mean did not move; rate's std was 0 and its mean is unchanged (the NaN left out)
    assert "price" not in out["columns"] and "rate" not in out["columns"]


def test_summary_script_refuses_a_table_that_is_no_name():
    for bad in ("", None, 3):
        with pytest.raises(ValueError, match="table name"):
            summary_script(bad, None)


# ---------------------------------------------------------------------------
# the trend over the last runs
# ---------------------------------------------------------------------------


def _summaries():
    from cataloger_dagster.core.history.timelapse import RunSummary

    numbers = [(1000, 2, 0, 90.0, 1.0), (1200, 3, 1, 70.0, 0.5), (900, 1, 0, 95.0, None), (1100, 4, 2, 60.0, 0.75)]
    return [RunSummary(timestamp=f"2026-01-0{i + 1}T00:00:00.000000Z", rows=rows,
                       issue_ids=[f"i{n}" for n in range(issues)], severities={"high": high}, health=health,
                       pass_rate=rate) for i, (rows, issues, high, health, rate) in enumerate(numbers)]


def test_the_trend_over_the_last_runs_is_said_and_drawn():
    trend = _summaries()
    summary = compare(_run("t2", 900, BASE_COLUMNS), _run("t3", 1100, BASE_COLUMNS), trend=trend)
    assert summary.headline[-1] == (
        "Over the last 4 runs (since 2026-01-01T00:00:00.000000Z): rows 1,000 → 1,100 (between 900 and 1,200); "
        "standing issues 2 → 4 (between 1 and 4); health 90 → 60 (between 60 and 95); pass rate 100% → 75% "
        "(between 50% and 100%).")
    html = render_recent_summary(summary)
    assert 'id="trend"' in html and "The last 4 runs" in html
    for chart in ("Rows", "Issues", "Health", "Pass rate"):
        assert f'data-chart="{chart}"><h3>{chart}</h3><svg' in html
    # newest first, this run marked; a pass rate no run recorded shows as a dash
    rows = html.split('id="trend-runs"')[1]
    assert rows.index("2026-01-04") < rows.index("2026-01-01") and "(this run)" in rows
    assert rows.count("<tr data-run=") == 4


def test_two_runs_say_no_more_than_their_step():
    trend = _summaries()[:2]
    summary = compare(_run("t0", 1000, BASE_COLUMNS), _run("t1", 1200, BASE_COLUMNS), trend=trend)
    assert not any(line.startswith("Over the last") for line in summary.headline)
    assert 'id="trend"' in render_recent_summary(summary)   # the two points are still drawn
    assert 'id="trend"' not in render_recent_summary(compare(None, _run("t0", 1000, BASE_COLUMNS),
                                                                  trend=trend[:1]))


def test_summary_script_holds_the_trend_and_recomputes_the_current_rows(tmp_path):
    db = _prices(tmp_path)
    earlier = _summaries()
    code = summary_script("prices", _profile(1100, []), previous_timestamp=earlier[-1].timestamp,
                          trend=earlier)
    trend = _run_summary(code, db, tmp_path)["trend"]
    assert trend["runs"] == 5 and trend["since"] == "2026-01-01T00:00:00.000000Z"
    assert trend["rows"] == [1000, 1200, 900, 1100, 40]          # 40: the table now
    assert trend["rows_min"] == 40 and trend["rows_max"] == 1200
    assert trend["rows_change"] == -960 and trend["rows_change_pct"] == -96.0
    assert trend["standing_issues"] == [2, 3, 1, 4] and trend["high_issues"] == [0, 1, 0, 2]
    assert trend["health"] == [90.0, 70.0, 95.0, 60.0] and trend["pass_rate"] == [1.0, 0.5, None, 0.75]

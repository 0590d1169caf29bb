"""recent_summary: the asset end to end over two runs of a real DuckDB table (its page, metadata
and summary_script.py).  compare_runs and the script on their own are in
tests/core/history/test_recent_changes.py."""

from __future__ import annotations

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


@pytest.mark.slow
def test_recent_summary_over_two_runs(tmp_path):
    from cataloger_dagster.definitions import TABLE_ASSETS
    from cataloger_dagster.settings.factories import resources

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
        (run1,) = sorted(p for p in (store_root / "people.duckdb" / "people").iterdir() if p.is_dir())
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

    runs = sorted(p for p in (store_root / "people.duckdb" / "people").iterdir() if p.is_dir())
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
    # the trend over the runs: both on the page, and in the script with the row count recomputed
    assert meta["trend_runs"].value == 2
    assert html.count("<tr data-run=") == 2 and f'data-run="{run1.name}"' in html
    assert out["trend"]["runs"] == 2 and out["trend"]["rows"] == [200, 250]
    assert out["trend"]["since"] == run1.name and out["trend"]["rows_change"] == 50


@pytest.mark.slow
def test_the_trend_covers_the_runs_the_config_asks_for(tmp_path):
    from cataloger_dagster.definitions import TABLE_ASSETS
    from cataloger_dagster.settings.factories import resources

    db = tmp_path / "people.duckdb"
    _make_table(db)
    res = resources(database=f"duckdb://{db}", store=str(tmp_path / "store"))
    quick = {"investigations": {"config": {"exploration_rate": 0.0}}}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["people"])
        for runs in (10, 10, 2):
            result = dg.materialize(TABLE_ASSETS, partition_key="people", instance=instance, resources=res,
                                    run_config={"ops": {**quick, "recent_summary": {"config": {"runs": runs}}}})
            assert result.success
            meta = result.asset_materializations_for_node("recent_summary")[0].metadata
        assert meta["trend_runs"].value == 2   # the third run, asked for 2: itself and the one before
    folders = sorted(p for p in (tmp_path / "store" / "people.duckdb" / "people").iterdir() if p.is_dir())
    html = (folders[2] / "recent_summary.html").read_text()
    assert f'data-run="{folders[1].name}"' in html and f'data-run="{folders[0].name}"' not in html

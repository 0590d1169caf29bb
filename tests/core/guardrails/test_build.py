"""`build_suite`: the suite a run's results give, and what it catches when the data regresses."""

from __future__ import annotations

import duckdb
import ibis

from guarded_shop import BROKEN_TOTALS, ORPHANS, results_of

from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
from cataloger_dagster.core.models import ReviewMark


def _suite(path, **options):
    con, results = results_of(path, **options)
    return con, build_suite(con.table("orders"), results, tables={"customers": con.table("customers")})


def test_a_suite_pins_the_profile_and_guards_the_confirmed_findings(shop):
    con, suite = _suite(shop)
    kinds = {g.name: g for g in suite.guardrails}
    assert suite.dialect == "duckdb" and suite.table == "orders"
    assert {"row_count", "unique:order_id", "accepted_values:status", "null_rate:total"} <= kinds.keys()
    assert kinds["row_count"].low < 400 < kinds["row_count"].high
    assert kinds["null_rate:status"].high == 0  # never NULL
    rule = next(g for g in suite.guardrails if g.kind == "rule")
    assert rule.guards and rule.pinned_by == "finding" and rule.high == 2  # two rows break it now
    reference = next(g for g in suite.guardrails if g.kind == "reference")
    assert reference.guards and reference.high == len(ORPHANS)
    assert all(g.why for g in suite.guardrails)


def test_on_the_data_it_was_built_from_every_guardrail_passes(shop):
    con, suite = _suite(shop)
    results = run_suite(suite, ibis_query(con))
    assert [r.name for r in results if not r.passed] == []
    assert all(r.error is None for r in results)


def test_a_regression_fails_the_guardrails_it_breaks_with_the_keys_of_the_rows(shop):
    con, suite = _suite(shop)
    con.disconnect()
    raw = duckdb.connect(str(shop))
    raw.execute("UPDATE orders SET total = total + 40 WHERE order_id BETWEEN 100 AND 119")  # the rule, 20 rows
    raw.execute("UPDATE orders SET status = 'shiped' WHERE order_id = 50")  # a new category
    raw.execute("UPDATE orders SET order_id = 2 WHERE order_id = 3")  # a repeated key
    raw.close()
    con = ibis.duckdb.connect(str(shop))
    failed = {r.name: r for r in run_suite(suite, ibis_query(con)) if not r.passed}
    rule = next(r for r in failed.values() if r.kind == "rule")
    assert rule.measured == 2 + 20 and rule.failing_keys == ["17", "100", "101", "102", "103"]
    assert failed["accepted_values:status"].failing_keys == ["50"]
    assert failed["unique:order_id"].measured == 1
    assert "row_count" not in failed and BROKEN_TOTALS[0] == 17


def test_a_dismissed_finding_guards_nothing_and_an_expected_one_pins_its_level(shop):
    con, results = results_of(shop, confirmed=())
    rule = next(i for i in results.analysis.issues if i.type == "rule_violations")
    orphan = next(i for i in results.analysis.issues if i.type == "orphan_references")
    mark = dict(verdict="", reviewer="ana", at="2026-11-27T10:00:00Z", reviewed_id="x")
    rule.review = ReviewMark(state="dismissed", **mark)
    orphan.review = ReviewMark(state="expected", rows_then=10, **mark)
    suite = build_suite(con.table("orders"), results, tables={"customers": con.table("customers")})
    assert not any(g.guards == rule.id for g in suite.guardrails)
    pinned = next(g for g in suite.guardrails if g.guards == orphan.id)
    assert pinned.pinned_by == "expected" and pinned.high == 11  # ten accepted, plus a tenth
    assert "accepted" in pinned.why


def test_names_reach_the_sql_quoted_as_data(tmp_path):
    path = tmp_path / "odd.duckdb"
    raw = duckdb.connect(str(path))
    name = 'x"; DROP TABLE t; --'
    raw.execute(f'CREATE TABLE "odd table" (id INTEGER, "{name.replace(chr(34), chr(34) * 2)}" VARCHAR)')
    raw.executemany('INSERT INTO "odd table" VALUES (?, ?)', [(i, ("a", "b")[i % 2]) for i in range(40)])
    raw.close()
    con, results = results_of(path, table="odd table", confirmed=())
    suite = build_suite(con.table("odd table"), results)
    assert any(g.columns == [name] for g in suite.guardrails)
    results_run = run_suite(suite, ibis_query(con))
    assert all(r.passed and r.error is None for r in results_run)
    assert "odd table" in con.list_tables()


def test_a_columns_statements_are_the_same_over_the_narrow_table_that_compiles_them_fast(tmp_path):
    """Each column's pins compile over a table of that column, the key and one other: the SQL is
    the one the whole table gives, byte for byte, odd names and a key column included."""
    from cataloger_dagster.core.guardrails import pins

    path = tmp_path / "wide.duckdb"
    raw = duckdb.connect(str(path))
    odd = 'q"u\'ote'
    columns = ", ".join([f"c{j} INTEGER" for j in range(8)] + ['"q""u\'ote" VARCHAR', "kind VARCHAR", "day DATE"])
    raw.execute(f'CREATE TABLE "wide t" (id INTEGER, {columns})')
    raw.executemany('INSERT INTO "wide t" VALUES (?, ' + ", ".join("?" * 11) + ")",
                    [(i, *[i * j for j in range(8)], ("a", "b")[i % 2], ("x", "y", "z")[i % 3],
                      f"2024-01-{1 + i % 28:02d}") for i in range(60)])
    raw.close()
    con, results = results_of(path, table="wide t", confirmed=())
    table = con.table("wide t")
    whole = pins.Facts(table, "duckdb", results.profile)
    key = pins.key_column(results.profile)
    assert key == "id"
    compared = 0
    for cp in results.profile.columns:
        narrow = whole.on(cp.name, key)
        assert len(narrow.table.columns) <= 3 and narrow.table.get_name() == table.get_name()
        for pin in (pins.null_rate, pins.accepted_values, pins.value_range, pins.pattern):
            assert pin(narrow, cp) == pin(whole, cp), (pin.__name__, cp.name)
            compared += pin(whole, cp) is not None
    assert compared >= 12 and any(cp.name == odd for cp in results.profile.columns)
    suite = build_suite(table, results)
    assert all(r.passed and r.error is None for r in run_suite(suite, ibis_query(con)))

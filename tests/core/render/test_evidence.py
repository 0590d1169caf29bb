"""Each finding's evidence as sentences and small tables, each renderer on the details its issue
type really writes: the real detectors' on a small DuckDB table (the `shop` of
test_reader_page.py), and the history checks' on a real store of earlier runs."""

from __future__ import annotations

from cataloger_dagster.core.render.charts import fmt_value
from cataloger_dagster.core.render.evidence import evidence_blocks, humanise
from tests.core.render.test_reader_page import flat_rows, of_type, sentences, shop, tables  # noqa: F401  (shop: a fixture)

def test_a_broken_rule_reads_as_its_support_and_its_exceptions(shop):
    profile, _, issues = shop
    rule = of_type(issues, "rule_violations")
    d = rule.details
    blocks = evidence_blocks(rule.type, d, profile.row_count)
    said = sentences(blocks)
    assert f"The rule {d['rule']} holds on {d['holds']:,} of {d['applies']:,} rows" in said
    assert f"({d['holds'] / d['applies']:.1%} support)" in said
    assert f"{d['exceptions']} rows break it ({d['exceptions'] / profile.row_count:.1%} of the table)" in said
    [examples] = tables(blocks)
    assert examples["headers"] == list(d["examples"][0]) and len(examples["rows"]) == len(d["examples"])
    assert examples["rows"][0] == [f"{v:g}" if isinstance(v, float) else str(v) for v in d["examples"][0].values()]


def test_a_drift_reads_as_before_and_after(tmp_path):
    from cataloger_dagster.core.history.anomalies import history_findings
    from cataloger_dagster.core.layout import table_prefix
    from cataloger_dagster.resources.store import LocalStore
    from histories import Day, profile_of, run_timestamp, weekly, write_history

    store, prefix, days = LocalStore(root=str(tmp_path / "store")), table_prefix("shop", "orders"), weekly(3)
    write_history(store, prefix, days)
    now = Day(rows=days[-1].rows + 1000, amount_centre=90.0, null_rate=0.4)
    found = history_findings(store, prefix, run_timestamp(len(days)), profile_of(now))
    [drift] = [i for i in found if i.type == "distribution_drift"]
    d = drift.details
    blocks = evidence_blocks(drift.type, d, now.rows)
    before_after = [t for t in tables(blocks) if t["caption"] == "Before and after"][0]
    assert before_after["headers"] == ["Measure", "Previous run", "This run", "Expected"]
    [null_rate] = [r for r in before_after["rows"] if r[0] == "Null rate"]
    previous = d["chart"]["series"]["null rate"][-2]
    assert null_rate[1] == f"{previous:.1%}" and null_rate[2] == f"{d['null_rate']['value']:.1%}" == "40.0%"
    band = d["null_rate"]["band"]
    assert null_rate[3] == f"{max(band['low'], 0):.1%} to {min(band['high'], 1):.1%}"
    said = sentences(blocks)
    assert f"a PSI of {fmt_value(d['psi']['value'])}" in said and f"computed on its {d['psi']['on']}" in said
    assert d["previous_run"] in said
    assert all(b["caption"] != "Chart" for b in tables(blocks))   # drawn on the card, not tabled


def test_counts_read_with_their_share_of_the_rows(shop):
    profile, _, issues = shop
    future = of_type(issues, "out_of_range")
    blocks = evidence_blocks(future.type, future.details, profile.row_count)
    [counts] = [t for t in tables(blocks) if t["caption"] == humanise("counts")]
    n = future.details["counts"]["in the future"]
    assert counts["headers"] == ["Value", "Rows", "Share of rows"]
    assert counts["rows"] == [["in the future", str(n), f"{n / profile.row_count:.1%}"]]
    flat = flat_rows(blocks)
    assert flat["Rows"] == f"{n} ({n / profile.row_count:.1%} of rows)"
    assert flat["Fraction"] == f"{future.details['fraction']:.1%}"


def test_offending_values_read_with_their_counts(shop):
    profile, _, issues = shop
    spelled = of_type(issues, "inconsistent_categories")
    blocks = evidence_blocks(spelled.type, spelled.details, profile.row_count)
    [groups] = [t for t in tables(blocks) if t["caption"] == "Groups"]
    assert groups["headers"] == ["Group", "Value", "Rows", "Share of rows"]
    expected = [[g, v, f"{n:,}", f"{n / profile.row_count:.1%}"]
                for g, counts in spelled.details["groups"].items() for v, n in counts.items()]
    assert groups["rows"] == expected and len(expected) >= 3
    padded = of_type(issues, "whitespace_values")
    blocks = evidence_blocks(padded.type, padded.details, profile.row_count)
    [values] = [t for t in tables(blocks) if t["caption"] == "Values"]
    counts = sorted(padded.details["values"].items(), key=lambda kv: -kv[1])
    assert [r[:2] for r in values["rows"]] == [[v, f"{n:,}"] for v, n in counts]


def test_the_generic_renderer_tables_a_flat_dict_and_a_list_of_records():
    details = {"min_outlier": 9000.0, "parsed_from_text": False, "examples": [98000.0, 9000.0],
               "flagged": [{"value": 1.0, "rows": 2}, {"value": 3.5, "rows": 1}], "band": {"low": 1.5, "high": 2.25},
               "chart": {"series": {}}}
    blocks = evidence_blocks("some_new_check", details, 100)
    assert flat_rows(blocks) == {"Min outlier": "9,000", "Parsed from text": "false", "Examples": "98,000, 9,000",
                                 "low": "1.5", "high": "2.25"}
    [records] = [t for t in tables(blocks) if t["caption"] == "Flagged"]
    assert records["headers"] == ["value", "rows"] and records["rows"] == [["1", "2"], ["3.5", "1"]]
    assert not [t for t in tables(blocks) if t["caption"] == "Chart"]
    # a nested mapping's keys are data (column names, values): shown as they are, not put in words
    blocks = evidence_blocks("some_new_check", {"ignored_columns": {"order_id": "a row number"}, "rows": 100}, 100)
    assert flat_rows(blocks) == {"order_id": "a row number", "Rows": "100"}   # all the rows: no "100.0%"


def test_a_broken_null_rule_reads_as_where_the_column_is_null():
    import ibis

    from cataloger_dagster.core.issues.detectors import detect_issues
    from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
    from cataloger_dagster.core.profile.profiling import compute_profile

    backend = ibis.duckdb.connect()
    backend.raw_sql("""create table doses as select i as dose_id,
        case when i % 5 = 0 then null else (i % 9) * 10 end as dose,
        case when i % 5 = 0 or i % 101 = 0 then null else 'mg' end as unit
        from range(1, 2001) t(i)""")
    table = backend.table("doses")
    profile = compute_profile(table, database="d", table_name="doses", fingerprint=compute_fingerprint(table))
    [rule] = [i for i in detect_issues(table, profile) if i.type == "rule_violations"]
    backend.disconnect()
    d = rule.details
    said = sentences(evidence_blocks(rule.type, d, profile.row_count))
    assert d["kind"] == "not_null_when" and f"The rule: {d['rule']}." in said
    assert f"{d['exceptions']} rows break it ({d['exceptions'] / 2000:.1%} of the table)." in said
    assert (f"unit is NULL on {d['rows'] + d['exceptions']} rows: {d['rows']} where dose is NULL too, "
            f"{d['exceptions']} where dose has a value.") in said
    assert "Values of dose on rows that break it: " in said and "support" not in said

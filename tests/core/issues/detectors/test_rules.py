"""Rules between columns found from the data: the rows that break a rule the others follow are a
finding; rules every row follows are knowledge; coincidences, rounding and flags are neither."""

from __future__ import annotations

import random

from cataloger_dagster.core.issues.detectors import context, rules
from cataloger_dagster.core.issues.detectors.rules import MIN_SUPPORT


def _found(tables, name):
    """(the rule findings by formula, the rules found) of table `name`."""
    ctx = tables.context(name)
    ctx.whole = ctx.table
    found = rules.rule_violations(ctx)
    return {i.details["rule"]: i for i in found}, {r.formula: r for r in rules.discovered(ctx)}


def _orders(tables, n=400, broken=(17, 230)):
    rng = random.Random(5)
    rows = []
    for i in range(n):
        sub = round(rng.uniform(5, 300), 2)
        ship = rng.choice([0, 4.99, 9.99, 14.5])
        total = round(sub + ship + (10 if i in broken else 0), 2)
        rows.append((i, sub, ship, total))
    tables.rows("orders", "order_id INTEGER, subtotal DOUBLE, shipping DOUBLE, total DOUBLE", rows)


def test_breaking_gives_the_rows_that_break_a_rule_as_a_condition_on_the_table(tables):
    _orders(tables, broken=(17, 230, 301))
    found, known = _found(tables, "orders")
    t = tables.context("orders").table
    rule = known["total = subtotal + shipping"]
    broken = t.filter(rules.breaking(t, rule)).order_by("order_id")
    assert broken.order_id.to_pyarrow().to_pylist() == [17, 230, 301]
    assert found["total = subtotal + shipping"].details["exceptions"] == 3
    order = rule.model_copy(update={"kind": "order", "formula": "shipping <= subtotal", "result": "shipping",
                                    "operands": ["subtotal"]})
    above = t.filter(rules.breaking(t, order)).count().to_pyarrow().as_py()
    assert above == t.filter(t.shipping > t.subtotal).count().to_pyarrow().as_py()


def test_a_total_that_is_not_the_sum_of_its_parts_on_two_rows(tables):
    _orders(tables)
    found, known = _found(tables, "orders")
    issue = found["total = subtotal + shipping"]
    assert issue.type == "rule_violations" and issue.affectedRows == 2
    assert issue.affectedColumns == ["total", "subtotal", "shipping"]
    d = issue.details
    assert (d["holds"], d["applies"], d["exceptions"]) == (398, 400, 2)
    # the examples are the two broken rows, with the values of the columns involved
    assert len(d["examples"]) == 2 and all(abs(e["total"] - e["subtotal"] - e["shipping"] - 10) < 1e-6
                                           for e in d["examples"])
    assert "398 of 400 rows" in issue.description and "2 rows break it" in issue.description
    assert set(found) == {"total = subtotal + shipping"} and known["total = subtotal + shipping"].holds == 398


def test_columns_named_like_the_searchs_own_figures_change_nothing(tables):
    # the search names each candidate's figures in one projection beside the columns an order
    # compares: dates named d0 and d1 (ordered on every row) must not clash with those names
    _orders(tables)
    tables.sql("CREATE TABLE named AS SELECT *, DATE '2024-01-01' + CAST(order_id AS INTEGER) AS d0, "
               "DATE '2024-01-01' + CAST(order_id AS INTEGER) + 3 AS d1 FROM orders")
    found, known = _found(tables, "named")
    assert found["total = subtotal + shipping"].affectedRows == 2
    assert any(r.kind == "order" for r in known.values())


def test_detect_issues_reports_the_finding_and_hands_back_the_rules(tables):
    from cataloger_dagster.core.issues.detectors import detect_issues

    _orders(tables)
    found_rules = []
    issues = detect_issues(tables.con.table("orders"), tables.profile("orders"), found_rules=found_rules)
    assert [i.details["rule"] for i in issues if i.type == "rule_violations"] == ["total = subtotal + shipping"]
    assert [r.formula for r in found_rules] == ["total = subtotal + shipping"]


def test_a_rule_every_row_follows_is_knowledge_not_a_finding(tables):
    _orders(tables, broken=())
    found, known = _found(tables, "orders")
    assert found == {}
    rule = known["total = subtotal + shipping"]
    assert rule.kind == "sum" and rule.holds == rule.applies == 400 and rule.steps["total"] == 0.01


def test_a_total_of_three_parts(tables):
    rng = random.Random(2)
    rows = []
    for i in range(300):
        a, b, c = rng.randint(0, 50), rng.randint(0, 80), rng.randint(0, 30)
        rows.append((a, b, c, a + b + c + (7 if i == 40 else 0)))
    tables.rows("votes", "yes_votes INTEGER, no_votes INTEGER, blank_votes INTEGER, total_votes INTEGER", rows)
    found, _ = _found(tables, "votes")
    assert list(found) == ["total_votes = yes_votes + no_votes + blank_votes"]
    assert found["total_votes = yes_votes + no_votes + blank_votes"].affectedRows == 1


def test_a_percentage_of_a_whole_and_a_product(tables):
    rng = random.Random(3)
    rows = []
    for i in range(250):
        part, whole = rng.randint(1, 200), 0
        whole = part + rng.randint(0, 300)
        qty, price = rng.randint(1, 9), round(rng.uniform(1, 50), 2)
        share = round(100 * part / whole, 1) if i != 12 else 12.3
        line = round(qty * price, 2) if i not in (3, 4) else round(qty * price + 1, 2)
        rows.append((part, whole, share, qty, price, line))
    tables.rows("stats", "part INTEGER, whole INTEGER, share_pct DOUBLE, qty INTEGER, unit_price DOUBLE, "
                         "line_amount DOUBLE", rows)
    found, _ = _found(tables, "stats")
    assert set(found) == {"share_pct = 100 * part / whole", "line_amount = qty * unit_price"}
    assert found["share_pct = 100 * part / whole"].affectedRows == 1
    assert found["line_amount = qty * unit_price"].affectedRows == 2


def test_a_difference_and_a_unit_conversion(tables):
    rng = random.Random(4)
    rows = []
    for i in range(200):
        gross, tax = round(rng.uniform(100, 900), 2), round(rng.uniform(5, 90), 2)
        inches = round(rng.uniform(10, 80), 1)
        cm = round(inches * 2.54, 2) if i != 9 else round(inches * 2.54 + 5, 2)
        rows.append((gross, tax, round(gross - tax, 2) if i != 150 else 1.0, inches, cm))
    tables.rows("pay", "gross DOUBLE, tax DOUBLE, net DOUBLE, height_in DOUBLE, height_cm DOUBLE", rows)
    found, _ = _found(tables, "pay")
    assert set(found) == {"net = gross - tax", "height_cm = 2.54 * height_in"}
    assert {i.affectedRows for i in found.values()} == {1}


def test_a_low_above_its_high_and_an_end_before_its_start(tables):
    rng = random.Random(6)
    rows = []
    for i in range(150):
        low = round(rng.uniform(-5, 20), 1)
        high = round(low + rng.uniform(0, 12), 1)
        start = f"2024-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}"
        end = f"2024-{rng.randint(7, 12):02d}-{rng.randint(1, 28):02d}" if i != 70 else "2023-12-01"
        rows.append((low, high, start, end) if i != 33 else (high, low, start, end))
    tables.rows("spans", "temp_min DOUBLE, temp_max DOUBLE, start_date DATE, end_date DATE", rows)
    found, known = _found(tables, "spans")
    assert set(found) == {"temp_min <= temp_max", "start_date <= end_date"}
    assert found["temp_min <= temp_max"].affectedRows == 1 and found["start_date <= end_date"].affectedRows == 1
    assert "temp_min above temp_max" in found["temp_min <= temp_max"].description


def test_rows_that_break_two_rules_through_one_column_are_one_finding(tables):
    rng = random.Random(8)
    rows = []
    for i in range(200):
        sub, ship = round(rng.uniform(5, 300), 2), round(rng.uniform(1, 20), 2)
        total = round(sub + ship, 2)
        total_cents = int(round(total * 100))
        if i in (5, 6):
            total += 50   # a wrong total, copied nowhere else: it breaks both rules it is in
        rows.append((sub, ship, total, total_cents))
    tables.rows("bills", "subtotal DOUBLE, shipping DOUBLE, total DOUBLE, total_in_cents BIGINT", rows)
    found, _ = _found(tables, "bills")
    assert len(found) == 1
    (issue,) = found.values()
    assert issue.affectedRows == 2 and len(issue.details["same_rows"]) == 1
    assert set(issue.affectedColumns) == {"total", "subtotal", "shipping", "total_in_cents"}


# --------------------------------------------------------------------------
# legitimate look-alikes: nothing to report
# --------------------------------------------------------------------------


def test_a_relation_most_but_not_enough_rows_follow_is_no_rule(tables):
    # the parts add up to the total on 90% of rows: the total includes something else (a discount)
    rng = random.Random(9)
    rows = []
    for i in range(300):
        sub, ship = round(rng.uniform(5, 300), 2), round(rng.uniform(1, 20), 2)
        rows.append((sub, ship, round(sub + ship - (rng.uniform(1, 30) if i % 10 == 0 else 0), 2)))
    tables.rows("orders", "subtotal DOUBLE, shipping DOUBLE, total DOUBLE", rows)
    found, known = _found(tables, "orders")
    assert found == {} and known == {}


def test_a_small_table_has_too_few_rows_for_a_rule_with_an_exception(tables):
    rows = [(i + 1.5, 2.25, i + 3.75) for i in range(MIN_SUPPORT - 2)] + [(1.0, 1.0, 5.0)]
    tables.rows("tiny", "subtotal DOUBLE, shipping DOUBLE, total DOUBLE", rows)
    assert _found(tables, "tiny") == ({}, {})


def test_rounded_parts_that_miss_their_total_by_a_rounding_step(tables):
    # shares rounded to whole percents: 33 + 33 + 33 is 99, not 100
    rng = random.Random(10)
    rows = []
    for _ in range(200):
        a, b = rng.uniform(0, 1), rng.uniform(0, 1)
        c = rng.uniform(0, 1)
        s = a + b + c
        pcts = [round(100 * x / s) for x in (a, b, c)]
        rows.append((*pcts, 100))
    tables.rows("shares", "urban_pct INTEGER, rural_pct INTEGER, other_pct INTEGER, total_pct INTEGER", rows)
    found, _ = _found(tables, "shares")
    assert found == {}


def test_flags_and_counts_of_few_values_make_no_rule(tables):
    rng = random.Random(11)
    rows = [(rng.randint(0, 1), rng.randint(0, 1), rng.randint(0, 2), rng.randint(0, 1)) for _ in range(500)]
    tables.rows("flags", "is_new INTEGER, is_paid INTEGER, n_items INTEGER, has_gift INTEGER", rows)
    assert _found(tables, "flags") == ({}, {})


def test_a_copy_of_a_column_does_not_repeat_the_rule(tables):
    rng = random.Random(12)
    rows = []
    for _ in range(200):
        sub, ship = round(rng.uniform(5, 300), 2), round(rng.uniform(1, 20), 2)
        rows.append((sub, sub, ship, round(sub + ship, 2)))
    tables.rows("orders", "subtotal DOUBLE, subtotal_copy DOUBLE, shipping DOUBLE, total DOUBLE", rows)
    found, known = _found(tables, "orders")
    assert found == {} and len(known) == 1


def test_unrelated_measures_whose_means_add_up_make_no_rule(tables):
    rng = random.Random(13)
    rows = [(round(rng.gauss(40, 8), 1), round(rng.gauss(60, 8), 1), round(rng.gauss(100, 11), 1),
             round(rng.gauss(2400, 900), 1)) for _ in range(2000)]
    tables.rows("body", "bill_length DOUBLE, bill_depth DOUBLE, flipper_length DOUBLE, body_mass DOUBLE", rows)
    assert _found(tables, "body") == ({}, {})


def test_bounds_named_alike_that_are_not_ordered_and_dates_with_no_order(tables):
    rng = random.Random(14)
    rows = [(rng.uniform(0, 10), rng.uniform(0, 10), f"2024-01-{rng.randint(1, 28):02d}",
             f"2024-01-{rng.randint(1, 28):02d}") for _ in range(300)]
    tables.rows("pairs", "score_min DOUBLE, score_max DOUBLE, order_date DATE, review_date DATE", rows)
    assert _found(tables, "pairs") == ({}, {})


def test_dates_that_never_overlap_hold_no_rule_between_rows(tables):
    rng = random.Random(15)
    rows = [(f"1990-01-{rng.randint(1, 28):02d}", f"2024-01-{rng.randint(1, 28):02d}") for _ in range(100)]
    tables.rows("people", "birth_date DATE, visit_date DATE", rows)
    assert _found(tables, "people") == ({}, {})


def test_identifiers_and_calendar_parts_are_not_quantities(tables):
    # year = 2000 + offset and id = parent_id + 1 hold, but identifiers and years are not amounts
    rows = [(i, i + 1, 2000 + i % 20, i % 20) for i in range(300)]
    tables.rows("ids", "parent_id INTEGER, child_id INTEGER, year INTEGER, year_offset INTEGER", rows)
    found, known = _found(tables, "ids")
    assert found == {} and all("id" not in r.columns[0] for r in known.values())


def test_the_example_of_a_broken_difference_names_what_the_parts_give(tables):
    rows = [(100.0 + i, 10.0 + i % 7, 90.0 + i - i % 7 if i != 3 else 1.0) for i in range(60)]
    tables.rows("pay", "gross DOUBLE, tax DOUBLE, net DOUBLE", rows)
    found, _ = _found(tables, "pay")
    assert "for example gross is 103 where tax + net gives 14" in found["net = gross - tax"].description


def test_a_big_table_s_rules_are_first_looked_for_in_a_sample_and_counted_exactly(tables, monkeypatch):
    """Above SAMPLE_ROWS rows, every candidate is counted on the seeded sample and only those that
    may hold there are counted over the table: the same rules, the exceptions exact."""
    _orders(tables, n=20_000, broken=(17, 230, 9_001, 19_999))
    exact_found, exact_known = _found(tables, "orders")
    assert exact_found["total = subtotal + shipping"].affectedRows == 4

    counted = []
    real = rules._counts
    monkeypatch.setattr(context, "SAMPLE_ROWS", 2_000)
    monkeypatch.setattr(rules, "_counts", lambda ctx, table, cands, steps: counted.append(len(cands))
                        or real(ctx, table, cands, steps))
    found, known = _found(tables, "orders")
    assert {f: (i.affectedRows, i.details["holds"], i.details["applies"]) for f, i in found.items()} == \
        {f: (i.affectedRows, i.details["holds"], i.details["applies"]) for f, i in exact_found.items()}
    assert known.keys() == exact_known.keys()
    assert counted == [1, 1]   # the sample, then the table

    # a relation only half the sample follows is never counted over the table
    tables.sql("DROP TABLE orders")
    _orders(tables, n=20_000, broken=range(0, 20_000, 2))
    counted.clear()
    found, known = _found(tables, "orders")
    assert counted == [1] and not found and not known

"""Text with stray spaces: padded twins of a label, padded free text, and the look-alikes that
are no finding (blank values, fixed-width codes, prose over several lines, trimmed text)."""

from __future__ import annotations

from cataloger_dagster.core.issues.detectors.labels import inconsistent_categories
from cataloger_dagster.core.issues.detectors.whitespace import whitespace_values


def _run(tables, table, column, check=whitespace_values):
    ctx = tables.context(table)
    cp = next(c for c in ctx.profile.columns if c.name == column)
    return check(ctx, cp, ctx.table.schema()[column])


def test_a_value_with_a_trailing_space_beside_the_same_value_without(tables):
    rows = [("blue",)] * 60 + [("green",)] * 40 + [("blue ",)] * 3 + [(" green",)] * 2
    tables.rows("paint", "colour VARCHAR", rows)
    found = _run(tables, "paint", "colour")
    assert found is not None and found.type == "whitespace_values"
    assert found.affectedRows == 5 and found.severity == "medium"
    assert found.details["twins"] == {"blue ": "blue", " green": "green"}
    assert found.details["values"] == {"blue ": 3, " green": 2}
    # one root cause, one finding: the category check does not report the same values as variants
    assert _run(tables, "paint", "colour", inconsistent_categories) is None


def test_a_padded_value_that_also_changes_case_is_a_variant_too(tables):
    rows = [("blue",)] * 60 + [("green",)] * 40 + [("Blue ",)] * 3
    tables.rows("paint", "colour VARCHAR", rows)
    assert _run(tables, "paint", "colour").affectedRows == 3
    variants = _run(tables, "paint", "colour", inconsistent_categories)
    assert variants is not None and variants.details["groups"] == {"blue": {"blue": 60, "Blue ": 3}}


def test_doubled_spaces_inside_a_label(tables):
    rows = [("Home & Kitchen",)] * 50 + [("Home  & Kitchen",)] * 2 + [("Books",)] * 30
    tables.rows("products", "category VARCHAR", rows)
    found = _run(tables, "products", "category")
    assert found is not None and found.details["twins"] == {"Home  & Kitchen": "Home & Kitchen"}


def test_padded_free_text_is_counted_in_the_scan_of_free_text(tables):
    # more distinct values than are read on the host: counted in SQL, with a few examples
    tables.sql("CREATE TABLE notes AS SELECT CASE WHEN i % 10000 = 7 THEN 'note ' || i || ' ' "
               "ELSE 'note ' || i END AS body FROM range(60000) t(i)")
    found = _run(tables, "notes", "body")
    assert found is not None and found.affectedRows == 6 and found.severity == "low"
    assert found.details["examples"][0] == "note 10007 "


def test_look_alikes_that_are_no_finding(tables):
    rows = ([("Adelie", "A1    ", "", "First line.\nSecond line.  ")] * 40
            + [("Gentoo", "B22   ", "  ", "One line")] * 40
            + [("Chinstrap", "C333  ", None, "Two\n lines")] * 20)
    tables.rows("birds", "species VARCHAR, code VARCHAR, blank VARCHAR, prose VARCHAR", rows)
    for column in ("species", "code", "blank", "prose"):
        assert _run(tables, "birds", column) is None, column


def test_a_doubled_space_without_a_twin_is_a_names_layout(tables):
    rows = [("BE-58  BARON",)] * 3 + [("B-737-300",)] * 40 + [("A-320",)] * 30
    tables.rows("strikes", "model VARCHAR", rows)
    assert _run(tables, "strikes", "model") is None


def test_a_char_column_padded_to_its_width_is_no_finding(tables):
    # CHAR(8): the names that do not fill the width come back padded to it, the others as they are
    names = ["Smith   ", "Jones   ", "Brown   ", "Williams", "Robinson", "Anderson"]
    tables.rows("people", "surname VARCHAR", [(n,) for n in names for _ in range(10)])
    assert _run(tables, "people", "surname") is None

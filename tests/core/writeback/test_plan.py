"""What a writeback does with each comment, and the diff a person reads first."""

from __future__ import annotations

from commented_tables import ODD_COLUMN, TABLE, understanding
from cataloger_dagster.core.writeback.plan import comment_diff, plan_comments


def _actions(current, ours=None, overwrite=False):
    changes = plan_comments(TABLE, understanding(), current, ours or {}, overwrite=overwrite)
    return {c.column: c.action for c in changes}


def test_an_object_without_a_comment_or_with_the_catalogs_previous_one_is_written():
    current = {None: None, "id": "An older text of the catalog.", ODD_COLUMN: ""}
    assert _actions(current, {"id": {"An older text of the catalog."}}) == {
        None: "write", "id": "write", ODD_COLUMN: "write"}


def test_a_persons_comment_is_kept_unless_overwrite():
    current = {None: "Orders, by finance.", "id": "The order's number.", ODD_COLUMN: None}
    assert _actions(current) == {None: "kept", "id": "unchanged", ODD_COLUMN: "write"}
    assert _actions(current, overwrite=True)[None] == "write"


def test_a_column_no_longer_in_the_table_and_an_empty_description_are_left_out():
    model = understanding(column_text="   ")
    changes = plan_comments(TABLE, model, {None: None, "id": None, ODD_COLUMN: None}, {})
    assert [c.column for c in changes] == [None, "id"]


def test_the_diff_shows_old_and_new_per_object_with_names_as_data():
    current = {None: "Old text\nof two lines", "id": "A person's text.", ODD_COLUMN: None}
    diff = comment_diff(plan_comments(TABLE, understanding(), current, {None: {"Old text\nof two lines"}}))
    assert f"--- {TABLE} (comment in the database)\n+++ {TABLE} (catalog)" in diff
    assert "-Old text\n-of two lines\n+One row per order." in diff
    assert f"# kept: {TABLE}.id has a comment a person wrote (--overwrite replaces it)" in diff
    assert f"+++ {TABLE}.{ODD_COLUMN} (catalog)" in diff
    odd = plan_comments("a\nb", understanding(), {None: None}, {})
    assert "+++ a\\x0ab (catalog)" in comment_diff(odd)  # a name cannot forge a line of the diff

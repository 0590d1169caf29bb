"""A table's writeback on real DuckDB, PostgreSQL and MariaDB: planned from the stored
understanding, written only when applied, idempotent, and a person's comment kept."""

from __future__ import annotations

import pytest

from commented_tables import DATABASE, HOSTILE, ODD_COLUMN, TABLE, store_understanding, understanding
from cataloger_dagster.core.writeback.plan import comment_diff
from cataloger_dagster.core.writeback.session import plan_table, read_comments, remember
from cataloger_dagster.resources.database.comments import CommentSession


def _comments(url):
    with CommentSession(url, writable=False) as session:
        return read_comments(session, TABLE)


def _plan(url, store, *, writable=False, overwrite=False):
    session = CommentSession(url, writable=writable)
    return session, plan_table(store, DATABASE, session, TABLE, overwrite=overwrite)


def test_a_plan_alone_writes_nothing_and_its_diff_names_each_change(commented):
    url, store = commented
    session, wb = _plan(url, store)
    with session:
        diff = comment_diff(wb.changes)
    assert [(c.column, c.action) for c in wb.changes] == [(None, "write"), ("id", "write"), (ODD_COLUMN, "write")]
    assert len(wb.statements) == 3  # the column the table no longer has is left out
    for label in (TABLE, f"{TABLE}.id", f"{TABLE}.{ODD_COLUMN}"):
        assert f"+++ {label} (catalog)" in diff
    assert "+second line with a \\ backslash and 'quotes'" in diff
    now = _comments(url)
    assert now.table is None and set(now.columns.values()) == {None}


def test_applied_twice_the_comments_are_the_descriptions_exactly(commented):
    url, store = commented
    session, wb = _plan(url, store, writable=True)
    with session:
        session.execute(wb.statements)
        session.execute(wb.statements)  # the script run again changes nothing
        remember(store, DATABASE, wb, applied=True)
    now = _comments(url)
    assert now.table == "One row per order."
    assert now.columns["id"] == "The order's number."
    assert now.columns[ODD_COLUMN] == HOSTILE
    session, again = _plan(url, store)
    with session:
        assert {c.action for c in again.changes} == {"unchanged"} and again.statements == []


def test_a_persons_comment_is_kept_unless_overwrite_and_the_catalogs_own_is_updated(commented):
    url, store = commented
    session, wb = _plan(url, store, writable=True)
    with session:
        session.execute(wb.statements)
        remember(store, DATABASE, wb, applied=True)
        person = [s for s in wb.statements if "The order" in s][0].replace("The order''s number.", "Set by a person.")
        session.execute([person.replace("The order\\'s number.", "Set by a person.")])
    assert _comments(url).columns["id"] == "Set by a person."
    store_understanding(store, understanding(table_text="One row per order, refunds included."))
    session, wb = _plan(url, store, writable=True)
    with session:
        assert [(c.column, c.action) for c in wb.changes] == [(None, "write"), ("id", "kept"), (ODD_COLUMN, "unchanged")]
        assert "# kept: " + TABLE + ".id has a comment a person wrote" in comment_diff(wb.changes)
        session.execute(wb.statements)
    now = _comments(url)
    assert now.table == "One row per order, refunds included."  # the catalog's own, replaced
    assert now.columns["id"] == "Set by a person."
    session, wb = _plan(url, store, writable=True, overwrite=True)
    with session:
        session.execute(wb.statements)
    assert _comments(url).columns["id"] == "The order's number."


@pytest.mark.parametrize("commented", [pytest.param("mysql", marks=pytest.mark.mysql)], indirect=True)
def test_on_mysql_each_column_keeps_its_type_nullability_default_and_on_update(commented):
    url, store = commented
    shape = ("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, CHARACTER_SET_NAME, COLLATION_NAME "
             "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY ORDINAL_POSITION")
    with CommentSession(url, writable=False) as session:
        before = session.rows(shape)
    session, wb = _plan(url, store, writable=True)
    with session:
        session.execute(wb.statements)
        after = session.rows(shape)
    assert after == before
    assert [row[2:4] for row in before[1:3]] == [("NO", "'it''s, (n/a)'"), ("YES", "1.50")]  # what was kept
    assert "on update" in before[3][4].lower()
    assert _comments(url).columns[ODD_COLUMN] == HOSTILE

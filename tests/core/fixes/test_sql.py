"""Fix scripts in SQL: names and values quoted per dialect, one transaction, pages show names' hidden characters."""

from __future__ import annotations

import pytest
from sqlglot import exp

from hostile_names import PAYLOAD

from cataloger_dagster.core.fixes import sql
from cataloger_dagster.core.fixes.sql import FixTarget, Unscriptable


def test_names_and_values_are_quoted_in_each_dialect():
    name, value = 'a"b`c\\d', "it's \\ here"
    for dialect, quoted, text in [("duckdb", '"a""b`c\\d"', "'it''s \\ here'"),
                                  ("postgres", '"a""b`c\\d"', "'it''s \\ here'"),
                                  ("sqlite", '"a""b`c\\d"', "'it''s \\ here'"),
                                  ("mysql", "`a\"b``c\\d`", "'it''s \\\\ here'")]:
        target = FixTarget(name, dialect)
        statement = sql.update(target, name, exp.Null(),
                               exp.EQ(this=target.column(name), expression=sql.literal(value)))
        assert target.sql(statement) == f"UPDATE {quoted} SET {quoted} = NULL WHERE {quoted} = {text}"


def test_a_schema_qualifies_the_table():
    target = FixTarget("orders", "postgres", schema="sales")
    assert target.sql(sql.delete(target, None)) == 'DELETE FROM "sales"."orders"'


def test_what_no_script_can_carry():
    with pytest.raises(Unscriptable):
        sql.ident("a\x00b")
    with pytest.raises(Unscriptable):
        sql.literal(float("nan"))
    with pytest.raises(ValueError, match="dialect"):
        FixTarget("t", "oracle")
    assert sql.literal(3).sql() == "3" and sql.literal(2.5).sql() == "2.5" and sql.literal(None).sql() == "NULL"


def test_a_script_is_one_transaction_with_comments_of_plain_ascii():
    name = f"note\n{PAYLOAD}\u202e"
    target = FixTarget(name, "sqlite")
    text = sql.script(target, [sql.delete(target, exp.GT(this=target.column("x"), expression=sql.literal(1)))],
                      title=f"Delete {name}", issue_id=f"{name}_outliers_x", notes=[name],
                      after=[sql.drop_staging(target)])
    lines = text.rstrip("\n").split("\n")
    comments = [line for line in lines if line.startswith("-- ")]
    assert all(line.isascii() and line.isprintable() for line in comments)
    assert lines[len(comments):len(comments) + 1] == ["BEGIN TRANSACTION;"]
    assert lines[-2:] == ["COMMIT;", 'DROP TABLE IF EXISTS "cataloger_fix_rows";']
    kinds = [type(s).__name__ for s in sql.statements_of(text, "sqlite")]
    assert kinds == ["Transaction", "Delete", "Commit", "Drop"]
    # MySQL keeps its temporary table out of the implicit commit of a plain DROP TABLE
    assert FixTarget("t", "mysql").sql(sql.drop_staging(FixTarget("t", "mysql"))).startswith("DROP TEMPORARY TABLE")


def test_a_page_shows_the_hidden_characters_of_names_but_keeps_the_scripts_lines():
    name = f"x\n{PAYLOAD}\u202e\u2028"
    target = FixTarget(name, "duckdb")
    text = sql.script(target, [sql.update(target, name, sql.literal(f"v\r{PAYLOAD}"),
                                          exp.EQ(this=target.column(name), expression=sql.literal(1)))],
                      title="t", issue_id="i")
    shown = sql.shown_script(text, "duckdb")
    assert shown.count("\n") == text.count("\n") - 3   # the name (table, SET and WHERE): its line break escaped
    assert '"x\\n__import__' in shown and "\\u202e" in shown and "\\u2028" in shown and "'v\\r__import__" in shown
    assert not any(line.startswith(PAYLOAD) for line in shown.split("\n"))
    # not SQL at all: the line breaks stay, every other hidden character shows
    assert sql.shown_script("a\u202eb\nc", None) == "a\\u202eb\nc"

"""Smart-fix follow-ups: a question, 2-4 options, a script per option; each script, run on a COPY of
the table, makes its issue go away (the detector finds it no more), and the source is never touched."""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import duckdb
import pyarrow as pa
import pytest

from backends import kind_params, load_tables
from hostile_names import HOSTILE, PAYLOAD

from cataloger_dagster.core.fixes import sql
from cataloger_dagster.core.fixes.followups import (
    BY_HAND, KEEP, Offer, fix_scripts, from_answer, heuristic_followup, offer, with_followups,
)
from cataloger_dagster.core.fixes.sql import FixTarget
from cataloger_dagster.core.issues.detectors import COLUMN_CHECKS, detect_issues
from cataloger_dagster.core.issues.detectors.context import Context
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel, TableProfile
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.database.resource import DatabaseResource

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
N = 600


def shop() -> dict[str, pa.Table]:
    """Orders with one of each smart-fix issue: a repeated order_id (the repeats are older rows),
    orders of unknown customers, three totals of 250000.5 among totals of 10 to 510, negative
    quantities, and 'Shipped' / 'shiped' beside 'shipped'."""
    base = dt.datetime(2025, 1, 1)
    orders = pa.table({
        "order_id": [i + 1 if i < N - 10 else i - (N - 10) + 1 for i in range(N)],
        "customer_id": [900 + i % 6 if i % 67 == 5 else 1 + i % 200 for i in range(N)],
        "total": [250000.5 if i in (100, 300, 500) else 10 + (i * 37 % 500) + 0.25 for i in range(N)],
        "quantity": [-2 if i % 130 == 3 else 1 + i % 7 for i in range(N)],
        "status": ["Shipped" if i % 45 == 0 else "shiped" if i % 47 == 1
                   else ["shipped", "pending", "cancelled", "shipped"][i % 4] for i in range(N)],
        "updated_at": [base + dt.timedelta(hours=i) for i in range(N)],
    })
    customers = pa.table({"customer_id": list(range(1, 201)), "name": [f"c{i}" for i in range(1, 201)]})
    return {"orders": orders, "customers": customers}


def read(url: str, table: str) -> tuple[DatabaseResource, TableProfile, dict[str, IssueModel]]:
    """The table as the pipeline reads it: profile and every detector, read-only."""
    db = DatabaseResource(url=url)
    t = db.table(table)
    profile = compute_profile(t, database="shop", table_name=table, fingerprint=compute_fingerprint(t))
    found = detect_issues(t, profile, catalog=db.catalog(), now=NOW)
    return db, profile, {i.id: i for i in found}


def still_found(url: str, table: str, issue: IssueModel) -> IssueModel | None:
    """The issue's own detector, run again on `url` (cheaper than all of them)."""
    db = DatabaseResource(url=url)
    try:
        t = db.table(table)
        profile = compute_profile(t, database="shop", table_name=table, fingerprint=compute_fingerprint(t))
        ctx = Context(t, profile, db.catalog() if issue.type == "orphan_references" else {}, NOW)
        check = dict(COLUMN_CHECKS)[issue.type]
        column = issue.affectedColumns[0]
        return check(ctx, profile.column(column), t.schema()[column])
    finally:
        db.close()


def smart(issues: dict[str, IssueModel]) -> dict[str, IssueModel]:
    """The smart-fix issues, with the variants' issue made smart as an LLM review may make it."""
    return {k: (i.model_copy(update={"category": "smart_fixes"}) if i.type == "inconsistent_categories" else i)
            for k, i in issues.items() if i.category == "smart_fixes" or i.type == "inconsistent_categories"}


# ------------------------------------------------------------------ running a script on a copy


def _copy(kind: str, url: str, scratch, tmp_path: Path) -> str:
    if kind in ("duckdb", "sqlite"):
        source = Path(url.split("://", 1)[1])
        copy = tmp_path / f"copy_{scratch.unique()}{source.suffix}"
        shutil.copy(source, copy)
        return f"{kind}://{copy}"
    return load_tables(kind, shop(), scratch)   # a fresh schema / database holding the same rows


def run_script(kind: str, url: str, script: str) -> None:
    """As a person would: the whole file through the backend's own client."""
    if kind == "duckdb":
        with duckdb.connect(url.split("://", 1)[1]) as con:
            con.execute(script)
    elif kind == "sqlite":
        con = sqlite3.connect(url.split("://", 1)[1])
        try:
            con.executescript(script)
        finally:
            con.close()
    elif kind == "postgres":
        import psycopg

        parts = urlsplit(url)
        with psycopg.connect(parts._replace(scheme="postgresql", query="").geturl(), autocommit=True) as con:
            con.execute(script)   # no parameters: psycopg sends the statements as they are
    else:
        import MySQLdb
        from MySQLdb.constants import CLIENT

        parts = urlsplit(url)
        con = MySQLdb.connect(host=parts.hostname, port=parts.port or 3306, user=unquote(parts.username or ""),
                              password=unquote(parts.password or ""), database=parts.path.strip("/"),
                              charset="utf8mb4", autocommit=True, client_flag=CLIENT.MULTI_STATEMENTS)
        try:
            with con.cursor() as cur:
                cur.execute(script)
                while cur.nextset():
                    pass
        finally:
            con.close()


def _target_of(kind: str, url: str, table: str) -> FixTarget:
    schema = parse_qs(urlsplit(url).query).get("schema", [None])[-1] if kind == "postgres" else None
    return FixTarget(table, sql.DIALECTS[kind], schema)


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ------------------------------------------------------------------ every backend


@pytest.mark.slow
@pytest.mark.parametrize("kind", kind_params())
def test_every_fix_script_run_on_a_copy_makes_its_issue_go(kind, scratch, tmp_path):
    url = load_tables(kind, shop(), scratch)
    source_db, profile, found = read(url, "orders")
    issues = smart(found)
    assert {i.type for i in issues.values()} == {"duplicate_keys", "orphan_references", "outliers", "out_of_range",
                                                  "inconsistent_categories"}
    before = _digest(url.split("://", 1)[1]) if kind in ("duckdb", "sqlite") else None
    source_db.close()
    ran = 0
    for issue in issues.values():
        followup = heuristic_followup(issue, profile, _target_of(kind, url, "orders"))
        assert 2 <= len(followup.options) <= 4
        assert set(followup.onResponse) == {o.key for o in followup.options}
        for option in followup.options:
            action = followup.onResponse[option.key]
            if action.action == KEEP:
                assert action.script is None and action.file is None
                continue
            assert action.language == "sql" and action.dialect == sql.DIALECTS[kind]
            assert action.file.startswith("fixes/") and action.file.endswith(".sql")
            copy = _copy(kind, url, scratch, tmp_path)
            # the same evidence, written for this copy (another schema on PostgreSQL)
            action = heuristic_followup(issue, profile, _target_of(kind, copy, "orders")).onResponse[option.key]
            run_script(kind, copy, action.script)
            assert still_found(copy, "orders", issue) is None, option.key
            ran += 1
    assert ran == 10   # 2 + 3 + 2 + 2 + 1 scripts: keep-as-is options have none
    if before is not None:
        assert _digest(url.split("://", 1)[1]) == before   # the source itself never changes
    # the copies held the issue as the source still does: the scripts, not chance, removed it
    assert all(still_found(url, "orders", issue) is not None for issue in issues.values())


def test_the_variants_question_names_the_most_frequent_spelling(scratch):
    url = load_tables("duckdb", shop(), scratch)
    db, profile, found = read(url, "orders")
    db.close()
    variants = smart(found)["orders_inconsistent_categories_status"]
    followup = heuristic_followup(variants, profile, FixTarget("orders"))
    assert followup.prompt == "Consolidate status to the most frequent spelling 'shipped'?"
    assert "'Shipped'" in followup.examples and "'shiped'" in followup.examples
    assert [o.key for o in followup.options] == ["consolidate", KEEP]
    outliers = heuristic_followup(found["orders_outliers_total"], profile, FixTarget("orders"))
    assert [o.key for o in outliers.options] == ["set_null", "cap", KEEP]
    assert outliers.examples == "250,000.5, 250,000.5, 250,000.5"
    keys = heuristic_followup(found["orders_duplicate_keys_order_id"], profile, FixTarget("orders"))
    assert [o.key for o in keys.options] == ["keep_latest", "keep_most_complete", KEEP]
    assert "updated_at" in keys.options[0].label


# ------------------------------------------------------------------ hostile names

SQL_HOSTILE = ['x"; DROP TABLE victim; --', "y`; DROP TABLE victim; #", "z'); DELETE FROM victim; --",
               "w */ DROP TABLE victim /*"]


def _hostile(name: str, column: str) -> dict[str, pa.Table]:
    n = 300
    return {
        name: pa.table({
            f"{column}_id": [i + 1 if i < n - 4 else i - (n - 4) + 1 for i in range(n)],
            column: [1048.5 if i in (7, 8) else 1.0 + (i * 13 % 40) for i in range(n)],
            f"{column} kind": [f"{column}Alpha" if i % 50 == 0 else [f"{column}alpha", "beta", "gamma"][i % 3]
                               for i in range(n)],
        }),
        "victim": pa.table({"v": [1, 2, 3]}),
    }


REWRITES = {"keep_latest", "keep_most_complete", "keep_one_copy"}   # end with a DROP after the COMMIT


def kinds_expected(key: str) -> list[str]:
    """The statements a script of option `key` holds, and nothing else."""
    body = ["Create", "Delete", "Insert"] if key in REWRITES else ["Update"]
    return ["Transaction", *body, "Commit", *(["Drop"] if key in REWRITES else [])]


def found_by(url: str, table: str, checks: dict[str, str]) -> tuple[TableProfile, dict[str, IssueModel]]:
    """The profile, and the issues of the given (detector type -> column) checks only."""
    db = DatabaseResource(url=url)
    try:
        t = db.table(table)
        profile = compute_profile(t, database="d", table_name=table, fingerprint=compute_fingerprint(t))
        ctx = Context(t, profile, {}, NOW)
        found = (dict(COLUMN_CHECKS)[kind](ctx, profile.column(c), t.schema()[c]) for kind, c in checks.items())
        return profile, {i.type: i for i in found if i is not None}
    finally:
        db.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["duckdb", "sqlite"])
def test_hostile_names_stay_data_in_every_fix_script(kind, scratch, tmp_path):
    """Table and column names that are code in Python and in SQL: every script is its own few
    statements and nothing else, shows its names' line breaks as escapes, runs, fixes its issue,
    and leaves another table alone."""
    names = [h for h in HOSTILE if "\x00" not in h] + SQL_HOSTILE
    for i, name in enumerate(names):
        column = names[(i + 1) % len(names)]
        checks = {"outliers": column, "duplicate_keys": f"{column}_id", "inconsistent_categories": f"{column} kind"}
        url = load_tables(kind, _hostile(name, column), scratch)
        profile, found = found_by(url, name, checks)
        issues = smart(found)
        assert set(issues) == set(checks), name
        copy = _copy(kind, url, scratch, tmp_path)
        for issue in issues.values():
            followup = heuristic_followup(issue, profile, FixTarget(name, sql.DIALECTS[kind]))
            scripted = {k: a for k, a in followup.onResponse.items() if a.script is not None}
            assert len(scripted) >= 1, (name, issue.type)
            for key, action in scripted.items():
                lines = action.script.split("\n")
                comments = [line for line in lines if line.startswith("--")]
                assert all(line.isascii() and line.isprintable() for line in comments)
                kinds = [type(s).__name__ for s in sql.statements_of(action.script, sql.DIALECTS[kind])]
                assert kinds == kinds_expected(key), key
                # as a page shows it, a name's line breaks are escapes: no line starts with its payload
                shown = sql.shown_script(action.script, sql.DIALECTS[kind]).split("\n")
                assert len(shown) == len(comments) + len(kinds) + 1   # one line each, and the final newline
                assert not any(line.lstrip().startswith(PAYLOAD) for line in shown)
            # the first fix of each issue, one after the other on one copy of the table
            run_script(kind, copy, next(iter(scripted.values())).script)
        assert found_by(copy, name, checks)[1] == {}, name
        db = DatabaseResource(url=copy)
        assert db.table("victim").count().execute() == 3
        db.close()


def test_a_name_no_script_can_carry_is_fixed_by_hand():
    issue = IssueModel(id="t_outliers_x", type="outliers", severity="medium", description="Two far values.",
                       affectedColumns=["x"], suggestedAction="Check them.", category="smart_fixes",
                       details={"fence_low": 0.0, "fence_high": 10.0, "min_outlier": 50.0, "max_outlier": 60.0,
                                "rows": 2, "examples": [60.0, 50.0], "parsed_from_text": False})
    profile = _profile("nul\x00name", [("x", "float")])
    followup = heuristic_followup(issue, profile, FixTarget("nul\x00name"))
    assert [o.key for o in followup.options] == [BY_HAND, KEEP]
    assert all(a.script is None for a in followup.onResponse.values())
    assert "NUL" in followup.onResponse[BY_HAND].description


# ------------------------------------------------------------------ the pieces


def _profile(table: str, columns: list[tuple[str, str]]) -> TableProfile:
    from cataloger_dagster.core.models import ColumnProfile, Fingerprint

    return TableProfile(database="d", table=table, row_count=10, column_count=len(columns),
                        columns=[ColumnProfile(name=n, dtype=k, kind=k, count=10, nulls=0, null_fraction=0.0)
                                 for n, k in columns],
                        sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=10, value="v"))


def _issue(type_: str, category: str = "smart_fixes", **details) -> IssueModel:
    return IssueModel(id=f"t_{type_}_x", type=type_, severity="medium", description="d", affectedColumns=["x"],
                      suggestedAction="Fix x at the source.", category=category, details=details)


def test_every_smart_fix_issue_gets_a_followup_and_its_scripts_go_to_fixes():
    profile = _profile("t", [("x", "integer")])
    result = AnalysisResultModel(issues=[
        _issue("out_of_range", counts={"negative": 3}, rows=3),
        _issue("missing_values", category="quick_fixes"),
        _issue("seasonal_drift"),          # a type an LLM raised: no script, decided by hand
    ], summary="s", completedAt="now")
    done = with_followups(result, profile, FixTarget("t"))
    followups = {i.type: i.followup for i in done.issues}
    assert followups["missing_values"] is None
    assert [o.key for o in followups["out_of_range"].options] == ["make_positive", "set_null", KEEP]
    assert [o.key for o in followups["seasonal_drift"].options] == [BY_HAND, KEEP]
    assert followups["seasonal_drift"].onResponse[BY_HAND].parameters["suggested_action"] == "Fix x at the source."
    files = fix_scripts(done)
    assert sorted(files) == ["fixes/t_out_of_range_x.make_positive.sql", "fixes/t_out_of_range_x.set_null.sql"]
    assert 'SET "x" = -"x" WHERE "x" < 0' in files["fixes/t_out_of_range_x.make_positive.sql"]
    # no dialect for this database: the follow-up is still there, by hand
    assert [o.key for o in with_followups(result, profile, None).issues[0].followup.options] == [BY_HAND, KEEP]


def test_a_models_followup_picks_among_the_offered_scripts():
    profile = _profile("t", [("x", "integer")])
    found: Offer = offer(_issue("out_of_range", counts={"negative": 3}, rows=3), profile, FixTarget("t"))
    made = from_answer(found, prompt="Are the 3 negative x refunds?", examples=None,
                       options=[("make_positive", "No, typos: flip the sign"), ("drop_table", "Drop it"),
                                ("make_positive", "again"), (KEEP, "Yes, refunds")], source="anthropic:abc")
    assert [(o.key, o.label) for o in made.options] == [("make_positive", "No, typos: flip the sign"),
                                                        (KEEP, "Yes, refunds")]
    assert made.onResponse["make_positive"].script == found.choices[0].action.script
    assert made.source == "anthropic:abc" and made.examples == found.examples
    # fewer than two of the offered choices: no follow-up from the model
    assert from_answer(found, prompt="?", examples=None, options=[("drop_table", "x"), (KEEP, "y")],
                       source="m") is None


def test_copies_under_a_new_row_number_keep_the_first_row_of_each_record(tmp_path):
    """The records entered twice differ in their row number only: the script keeps the lowest."""
    path = tmp_path / "gems.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE gems AS SELECT i + 1 AS rownames, round(0.2 + i * 0.01, 2) AS carat, "
                    "300 + i * 7 AS price, ['Good', 'Ideal'][1 + i % 2] AS cut FROM range(300) t(i)")
        con.execute("INSERT INTO gems SELECT 300 + rownames, carat, price, cut FROM gems WHERE rownames IN (4, 9)")
    db, profile, found = read(f"duckdb://{path}", "gems")
    db.close()
    issue = found["gems_duplicate_rows"]
    assert issue.details["ignored_columns"] == {"rownames": "a row number: unique on every row"}
    action = heuristic_followup(issue, profile, FixTarget("gems", "duckdb")).onResponse["keep_one_copy"]
    run_script("duckdb", f"duckdb://{path}", action.script)
    with duckdb.connect(str(path)) as con:
        assert con.execute("SELECT count(*), max(rownames) FROM gems").fetchone() == (300, 300)
    _, _, after = read(f"duckdb://{path}", "gems")
    assert "gems_duplicate_rows" not in after

"""The issues a careless detector raises on the corpus: the false alarms investigations must dismiss.

The catalog's investigations used to end up "confirming" whatever they were given: precipitation
"outliers" that are real storms, latitudes of real Pacific airports, taxi speeds, and category
"variants" that were numbers on a text-only import.  Our own detectors no longer raise those on
the corpus, so this module raises them the way the old detectors (and a hasty agent) did, with
no judgement at all:

* `outliers`: Tukey's fence (1.5 IQR) on every numeric column, whatever its shape;
* `inconsistent_categories`: every rare value within one or two edits of a frequent one, in
  every column read as text (as a text-only SQLite import reads it: '-0.6' beside '0.6');
* `sentinel_values`: every cell that *contains* a word such as NA, none or unknown;
* `duplicate_keys`: every column with mostly distinct values that is not unique.

The answer key (answer_key.yaml) decides which of them are true; the rest are the false alarms.
The issues carry the details our detectors give, so the investigation checks take them as
they take ours.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import duckdb

from cataloger_dagster.core.models import IssueModel

WORDS = ("na", "n/a", "none", "unknown", "null", "-")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _issue(table: str, type_: str, column: str, rows: int, **details) -> IssueModel:
    return IssueModel(id=f"naive_{table}_{type_}_{column}", type=type_, severity="medium",
                      description=f"naive {type_} on {column}", affectedColumns=[column],
                      suggestedAction="review", category="smart_fixes", affectedRows=rows,
                      source="naive", details=details)


def _outliers(con, table: str, column: str) -> list[IssueModel]:
    q1, q3 = con.execute(f"SELECT quantile_cont({_q(column)}, 0.25), quantile_cont({_q(column)}, 0.75) "
                         f"FROM {_q(table)}").fetchone()
    if q1 is None or q3 == q1:
        return []
    low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    n, smallest, largest = con.execute(
        f"SELECT count(*), min({_q(column)}), max({_q(column)}) FROM {_q(table)} "
        f"WHERE {_q(column)} < ? OR {_q(column)} > ?", [low, high]).fetchone()
    if not n:
        return []
    return [_issue(table, "outliers", column, n, fence_low=float(low), fence_high=float(high),
                   examples=[float(v) for v in (smallest, largest) if v is not None])]


def _categories(con, table: str, column: str) -> list[IssueModel]:
    counts = con.execute(f"SELECT CAST({_q(column)} AS VARCHAR) v, count(*) n FROM {_q(table)} "
                         f"WHERE {_q(column)} IS NOT NULL GROUP BY v ORDER BY n DESC, v").fetchall()
    if not 3 <= len(counts) <= 200:
        return []
    groups: dict[str, list[str]] = {}
    rows = 0
    frequent = [v for v, n in counts if n >= 5]
    for value, n in counts:
        if n >= 5:
            continue
        close = difflib.get_close_matches(value, frequent, n=1, cutoff=0.75)
        if close:
            groups.setdefault(close[0], [close[0]]).append(value)
            rows += n
    if not groups:
        return []
    return [_issue(table, "inconsistent_categories", column, rows, groups=groups, part="value",
                   examples=sorted(v for g in groups.values() for v in g[1:]))]


def _placeholders(con, table: str, column: str) -> list[IssueModel]:
    pattern = "|".join(w.replace("/", "\\/") for w in WORDS if w != "-")
    found = con.execute(
        f"SELECT {_q(column)} v, count(*) n FROM {_q(table)} "
        f"WHERE regexp_matches(lower({_q(column)}), '(^|[^a-z])({pattern})([^a-z]|$)') GROUP BY v"
    ).fetchall()
    if not found:
        return []
    return [_issue(table, "sentinel_values", column, sum(n for _, n in found),
                   values={v: n for v, n in found})]


def _keys(con, table: str, column: str) -> list[IssueModel]:
    rows, distinct = con.execute(f"SELECT count({_q(column)}), count(DISTINCT {_q(column)}) "
                                 f"FROM {_q(table)}").fetchone()
    if not rows or distinct == rows or distinct < 0.5 * rows:
        return []
    return [_issue(table, "duplicate_keys", column, rows - distinct, columns=[column])]


def naive_issues(path: str | Path) -> dict[str, list[IssueModel]]:
    """Every table's careless issues, by table name."""
    found: dict[str, list[IssueModel]] = {}
    with duckdb.connect(str(path), read_only=True) as con:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
            issues = []
            for column, type_ in con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                    "ORDER BY ordinal_position", [table]).fetchall():
                numeric = any(t in type_ for t in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL"))
                if numeric:
                    issues += _outliers(con, table, column)
                if type_ == "VARCHAR":
                    issues += _placeholders(con, table, column)
                if not type_.startswith(("DOUBLE", "FLOAT", "DECIMAL", "REAL")):
                    issues += _keys(con, table, column)
                issues += _categories(con, table, column)
            found[table] = issues
    return found

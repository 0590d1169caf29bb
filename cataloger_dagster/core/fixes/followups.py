"""Smart-fix follow-ups (the agent's fourth stage): one question per smart-fix issue, 2-4 options,
and for each option a concrete action with its fix script.

`offer` reads an issue's evidence (the detector's details, the profile) and returns what can be
offered for it: a question, an example line, and up to four `Choice`s, each an action with its
script already written (`core.fixes.sql`).  The heuristic follow-up offers them all; the LLM
agent words its own question and labels and picks among the same choices (`from_answer`), so a
script is always made here, from the evidence, with every name quoted, never by a model.

Which options each type gets:

  outliers            set NULL (entry errors) · cap at the fence (real but extreme) · keep
  out_of_range        make positive (sign errors, negatives only) or delete the rows · set NULL · keep
  duplicate_keys      keep the latest row per key (when a time column says which) · keep the most
                      complete row per key · keep all (the column is not a key)
  orphan_references   delete the orphan rows · set the reference NULL · add the missing keys to
                      the referenced table · keep
  inconsistent_categories  consolidate to the most frequent spelling · keep
  sentinel_values     set the placeholders NULL · keep
  duplicate_rows      keep one copy of each row (the first by row number when copies differ in
                      a row number or load time only) · keep
  anything else       fix by hand at the source · keep

"keep" and "by hand" have no script: choosing them changes nothing.  Columns read through text
(numbers stored as text, a mixed SQLite column) get "by hand" where a SQL comparison would
compare text, not numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

from sqlglot import exp

from cataloger_dagster.core import text
from cataloger_dagster.core.fixes import sql
from cataloger_dagster.core.fixes.sql import FixTarget, Unscriptable
from cataloger_dagster.core.grammar import count_noun, noun_for, verb_for
from cataloger_dagster.core.issues.detectors.context import numeric_sentinels
from cataloger_dagster.core.layout import fix_filename
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    ColumnProfile,
    IssueModel,
    SmartFixAction,
    SmartFixFollowupModel,
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    SmartFixOptionModel,
    TableProfile,
)

INCOMPARABLE_KINDS = {"nested", "json", "binary", "other"}
# words of a time column's name, the likeliest "latest version of the row" first
TIME_WORDS = (
    "updated",
    "modified",
    "changed",
    "loaded",
    "ingested",
    "inserted",
    "created",
    "timestamp",
    "time",
    "date",
    "at",
    "ts",
)
KEEP, BY_HAND = "keep", "by_hand"


def rows_of(n: int) -> str:
    """ "1 row", "2,118 rows": a fix's count of rows (a zero as the digit)."""
    return count_noun(n, "row", zero=None)


@dataclass
class Choice:
    key: str
    label: str
    action: SmartFixAction


@dataclass
class Offer:
    prompt: str
    choices: list[Choice]
    examples: Optional[str] = None


# --------------------------------------------------------------------------- shared pieces


def _keep(
    description: str = "Nothing changes. The next run finds the issue again; dismiss it in a review if it is expected.",
) -> SmartFixAction:
    return SmartFixAction(action=KEEP, description=description)


def _by_hand(issue: IssueModel, why: str = "") -> SmartFixAction:
    return SmartFixAction(
        action=BY_HAND,
        description=(f"{why} " if why else "") + issue.suggestedAction,
        parameters={"suggested_action": issue.suggestedAction},
    )


def _scripted(
    issue: IssueModel,
    target: FixTarget,
    key: str,
    action: str,
    title: str,
    statements: list[exp.Expression],
    *,
    parameters: dict[str, Any],
    notes: tuple[str, ...] = (),
    after: tuple[exp.Expression, ...] = (),
) -> SmartFixAction:
    return SmartFixAction(
        action=action,
        parameters=parameters,
        description=title,
        language="sql",
        dialect=target.dialect,
        script=sql.script(target, statements, title=title, issue_id=issue.id, notes=notes, after=after),
        file=fix_filename(issue.id, key),
    )


def _set_null(
    issue: IssueModel,
    target: FixTarget,
    column: str,
    label: str,
    title: str,
    where: exp.Expression,
    *,
    parameters: dict[str, Any],
    notes: tuple[str, ...] = (),
) -> Choice:
    """The choice that sets `column` to NULL on the rows `where` picks."""
    return Choice(
        "set_null",
        label,
        _scripted(
            issue,
            target,
            "set_null",
            "set_null",
            title,
            [sql.update(target, column, exp.Null(), where)],
            parameters=parameters,
            notes=notes,
        ),
    )


def _column(issue: IssueModel, profile: TableProfile) -> ColumnProfile:
    return profile.column(issue.affectedColumns[0])


def _n(value: float) -> str:
    return f"{value:,.10g}"


def _examples(values: list[Any], limit: int = 5) -> Optional[str]:
    shown = [
        repr(v) if isinstance(v, str) else _n(v) if isinstance(v, (int, float)) else str(v) for v in values[:limit]
    ]
    return ", ".join(shown) if shown else None


def _by_hand_offer(issue: IssueModel, why: str) -> Offer:
    columns = ", ".join(issue.affectedColumns) or "the table"
    return Offer(
        prompt=f"{issue.description} Fix it at the source, or keep {columns} as it is?",
        choices=[
            Choice(BY_HAND, "Fix it by hand at the source", _by_hand(issue, why)),
            Choice(KEEP, "Keep it as it is: it is expected", _keep()),
        ],
    )


def _no_sentinel(column: exp.Expression, cp: ColumnProfile) -> Optional[exp.Expression]:
    """Placeholders (-999, 9999) are the sentinel detector's, as the range detectors leave them out."""
    values = numeric_sentinels(cp)
    return exp.Not(this=sql.is_in(column.copy(), values)) if values else None


# --------------------------------------------------------------------------- per issue type


def _outliers(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    cp, d = _column(issue, profile), issue.details
    if d.get("parsed_from_text") or cp.kind not in NUMERIC_KINDS:
        return _by_hand_offer(issue, f"{cp.name} holds its numbers as text: give it a number type first.")
    c = target.column(cp.name)
    lo, hi, low, high = (float(d[k]) for k in ("fence_low", "fence_high", "min_outlier", "max_outlier"))
    sides, caps = [], []
    if high > hi:  # the bound on the far side leaves NaN (above every number in DuckDB) alone
        sides.append(
            sql.all_of(
                exp.GT(this=c.copy(), expression=sql.literal(hi)),
                exp.LTE(this=c.copy(), expression=sql.literal(high)) if math.isfinite(high) else None,
            )
        )
        top = math.floor(hi) if cp.kind == "integer" else hi
        caps.append(exp.If(this=exp.GT(this=c.copy(), expression=sql.literal(hi)), true=sql.literal(top)))
    if low < lo:
        sides.append(
            sql.all_of(
                exp.LT(this=c.copy(), expression=sql.literal(lo)),
                exp.GTE(this=c.copy(), expression=sql.literal(low)) if math.isfinite(low) else None,
            )
        )
        bottom = math.ceil(lo) if cp.kind == "integer" else lo
        caps.append(exp.If(this=exp.LT(this=c.copy(), expression=sql.literal(lo)), true=sql.literal(bottom)))
    if not sides:
        return _by_hand_offer(issue, "The evidence names no value beyond the fence.")
    where = sql.all_of(sql.any_of(sides), _no_sentinel(c, cp))
    n = int(d.get("rows") or issue.affectedRows or 0)
    fence = f"{_n(lo)} to {_n(hi)}"
    params = {"column": cp.name, "fence_low": lo, "fence_high": hi, "rows": n}
    return Offer(
        prompt=f"{count_noun(n, 'value', zero=None)} of {cp.name} {verb_for(n, 'lies')} far outside its usual range "
        f"(fence {fence}). Are they entry errors, or real extremes?",
        examples=_examples(d.get("examples") or []),
        choices=[
            _set_null(
                issue,
                target,
                cp.name,
                "Entry errors: set them to NULL",
                f"Set the {n:,} outliers of {cp.name} to NULL (values beyond {fence}).",
                where,
                parameters=params,
            ),
            Choice(
                "cap",
                f"Real but extreme: cap them at the fence ({fence})",
                _scripted(
                    issue,
                    target,
                    "cap",
                    "cap",
                    f"Cap the {n:,} outliers of {cp.name} at the fence ({fence}).",
                    [sql.update(target, cp.name, exp.Case(ifs=caps, default=c.copy()), where)],
                    parameters=params,
                ),
            ),
            Choice(KEEP, "They are real values: keep them", _keep()),
        ],
    )


def _range_rules(cp: ColumnProfile, c: exp.Column, labels: list[str], now: datetime) -> list[exp.Expression]:
    """The out-of-range detector's rules as SQL, for the labels it counted."""
    future = (now + timedelta(days=1)).astimezone(timezone.utc).replace(tzinfo=None)
    # dates as ISO text: every backend compares a date column with it, SQLite (dates as text) included
    bound = future.date().isoformat() if cp.kind == "date" else future.isoformat(sep=" ", timespec="seconds")
    rules = {
        "negative": lambda: exp.LT(this=c.copy(), expression=sql.literal(0)),
        "outside 0-100": lambda: exp.or_(
            exp.LT(this=c.copy(), expression=sql.literal(0)), exp.GT(this=c.copy(), expression=sql.literal(100))
        ),
        "age above 130": lambda: exp.GT(this=c.copy(), expression=sql.literal(130)),
        "in the future": lambda: exp.GT(this=c.copy(), expression=sql.literal(bound)),
        "before 1900": lambda: exp.LT(this=c.copy(), expression=sql.literal("1900-01-01")),
    }
    unknown = [label for label in labels if label not in rules]
    if unknown:
        raise Unscriptable(f"no rule for {', '.join(unknown)}")
    return [rules[label]() for label in labels]


def _out_of_range(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    cp, d = _column(issue, profile), issue.details
    counts = d.get("counts") or {}
    if cp.kind not in NUMERIC_KINDS + TEMPORAL_KINDS or not counts:
        return _by_hand_offer(issue, f"{cp.name} holds its values as text: give it its proper type first.")
    c = target.column(cp.name)
    now = datetime.fromisoformat(d["now"]) if d.get("now") else datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    where = sql.all_of(
        sql.any_of(_range_rules(cp, c, list(counts), now)), _no_sentinel(c, cp) if cp.kind in NUMERIC_KINDS else None
    )
    n = int(d.get("rows") or issue.affectedRows or 0)
    what = ", ".join(f"{k:,} {label}" for label, k in counts.items())
    params = {"column": cp.name, "rules": list(counts), "rows": n}
    first = (
        Choice(
            "make_positive",
            "Sign errors: make them positive",
            _scripted(
                issue,
                target,
                "make_positive",
                "make_positive",
                f"Make the {n:,} negative values of {cp.name} positive.",
                [sql.update(target, cp.name, exp.Neg(this=c.copy()), where)],
                parameters=params,
            ),
        )
        if list(counts) == ["negative"]
        else Choice(
            "delete_rows",
            "Wrong rows: delete them",
            _scripted(
                issue,
                target,
                "delete_rows",
                "delete_rows",
                f"Delete the {rows_of(n)} whose {cp.name} is implausible ({what}).",
                [sql.delete(target, where)],
                parameters=params,
            ),
        )
    )
    return Offer(
        prompt=f"{cp.name} has {what} {noun_for(n, 'value')} that should not occur. What are they?",
        examples=what,
        choices=[
            first,
            _set_null(
                issue,
                target,
                cp.name,
                "Entry errors: set them to NULL",
                f"Set the {n:,} implausible values of {cp.name} ({what}) to NULL.",
                where,
                parameters=params,
                notes=("It fails if the column is NOT NULL.",),
            ),
            Choice(KEEP, "They are valid (refunds, corrections, planned dates): keep them", _keep()),
        ],
    )


def _latest_column(profile: TableProfile, key: list[str]) -> Optional[str]:
    times = [c for c in profile.columns if c.kind in TEMPORAL_KINDS and c.name not in key and c.count]

    def rank(c: ColumnProfile) -> tuple:
        words = text.words(c.name)
        found = [TIME_WORDS.index(w) for w in words if w in TIME_WORDS]
        return (min(found) if found else len(TIME_WORDS), c.kind != "timestamp", c.name)

    return min(times, key=rank).name if times else None


def _all_columns(profile: TableProfile) -> list[str]:
    if len(profile.columns) != profile.column_count:
        raise Unscriptable("the profile does not list every column, so a rewrite of the table could lose some")
    return [c.name for c in profile.columns]


def _duplicate_keys(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    d = issue.details
    key = list(d.get("columns") or issue.affectedColumns)
    columns = _all_columns(profile)
    comparable = [c.name for c in profile.columns if c.kind not in INCOMPARABLE_KINDS]
    shown = ", ".join(key) if len(key) > 1 else key[0]
    n = int(d.get("rows") or issue.affectedRows or 0)
    params = {"key": key, "rows": n}
    latest = _latest_column(profile, key)
    choices = []
    if latest:
        choices.append(
            Choice(
                "keep_latest",
                f"Keep the latest row of each {shown} (by {latest}), delete the others",
                _scripted(
                    issue,
                    target,
                    "keep_latest",
                    "keep_latest",
                    f"Keep one row per {shown}: the latest by {latest}.",
                    sql.rewrite(
                        target, columns, sql.one_row_per_key(target, columns, key, latest=latest, comparable=comparable)
                    ),
                    parameters={**params, "latest_by": latest},
                    notes=("The table is rewritten through a temporary table, in one transaction.",),
                    after=(sql.drop_staging(target),),
                ),
            )
        )
    choices.append(
        Choice(
            "keep_most_complete",
            f"Keep the most complete row of each {shown}, delete the others",
            _scripted(
                issue,
                target,
                "keep_most_complete",
                "keep_most_complete",
                f"Keep one row per {shown}: the one with the fewest NULLs.",
                sql.rewrite(target, columns, sql.one_row_per_key(target, columns, key, comparable=comparable)),
                parameters=params,
                notes=("The table is rewritten through a temporary table, in one transaction.",),
                after=(sql.drop_staging(target),),
            ),
        )
    )
    choices.append(
        Choice(
            KEEP,
            f"Keep every row: {shown} is not a key",
            _keep(
                f"Nothing changes: {shown} is not a key of the table. Dismiss the issue in a review so it is not raised again."
            ),
        )
    )
    return Offer(
        prompt=f"{rows_of(n)} of {profile.table} {verb_for(n, 'shares')} their {shown} with another row. "
        f"Which row of each {shown} should stay?",
        examples=_examples([str(e) for e in d.get("examples") or []]),
        choices=choices,
    )


def _duplicate_rows(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    columns = _all_columns(profile)
    if any(c.kind in INCOMPARABLE_KINDS for c in profile.columns):
        return _by_hand_offer(issue, "Some columns cannot be compared by the database (JSON, binary).")
    n = int(issue.details.get("duplicate_rows") or issue.affectedRows or 0)
    ignored = [c for c in issue.details.get("ignored_columns") or {} if c in columns]
    if ignored:  # copies that differ in a row number or load time: one row per record, the first kept
        compared = [c for c in issue.details.get("compared_columns") or issue.affectedColumns if c in columns]
        kept = sql.one_row_per_key(target, columns, compared, comparable=ignored)
        what = f"{verb_for(n, 'repeats')} another row in every column but {', '.join(ignored)}"
    else:
        kept, what = sql.distinct_rows(target, columns), f"{verb_for(n, 'repeats')} another row exactly"
    return Offer(
        prompt=f"{rows_of(n)} of {profile.table} {what}. Are they copies, or separate events?",
        choices=[
            Choice(
                "keep_one_copy",
                "Copies: keep one of each",
                _scripted(
                    issue,
                    target,
                    "keep_one_copy",
                    "keep_one_copy",
                    f"Keep one copy of each row of {profile.table}.",
                    sql.rewrite(target, columns, kept),
                    parameters={"rows": n, "ignored_columns": ignored},
                    notes=("The table is rewritten through a temporary table, in one transaction.",),
                    after=(sql.drop_staging(target),),
                ),
            ),
            Choice(KEEP, "Separate events that look alike: keep them", _keep()),
        ],
    )


def _orphans(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    cp, d = _column(issue, profile), issue.details
    table, column = d["target_table"], d["target_column"]
    value: exp.Expression = target.column(cp.name)
    if d.get("match") == "digits":  # text codes against integer keys: compare as numbers
        value = exp.cast(exp.Nullif(this=exp.Trim(this=value), expression=sql.literal("")), "BIGINT")
    orphan = sql.not_in_keys(value, target, table, column)
    n, missing = int(d.get("rows") or issue.affectedRows or 0), int(d.get("missing_values") or 0)
    ref = f"{table}.{column}"
    params = {"column": cp.name, "references": ref, "rows": n, "missing_values": missing}
    return Offer(
        prompt=f"{rows_of(n)} {verb_for(n, 'has')} a {cp.name} that {ref} does not hold "
        f"({count_noun(missing, 'distinct value', zero=None)}). What should happen to them?",
        examples=_examples([str(e) for e in d.get("examples") or []]),
        choices=[
            Choice(
                "delete_orphans",
                "Delete the rows that point nowhere",
                _scripted(
                    issue,
                    target,
                    "delete_orphans",
                    "delete_orphans",
                    f"Delete the {rows_of(n)} whose {cp.name} has no match in {ref}.",
                    [sql.delete(target, orphan)],
                    parameters=params,
                ),
            ),
            _set_null(
                issue,
                target,
                cp.name,
                f"Keep the rows, set {cp.name} to NULL",
                f"Set {cp.name} to NULL on the {rows_of(n)} with no match in {ref}.",
                orphan,
                parameters=params,
                notes=("It fails if the column is NOT NULL.",),
            ),
            Choice(
                "add_missing_keys",
                f"{table} is incomplete: add the missing keys to it",
                _scripted(
                    issue,
                    target,
                    "add_missing_keys",
                    "add_missing_keys",
                    f"Add the {missing:,} missing {cp.name} values to {ref}.",
                    [sql.insert_missing_keys(target, value.copy(), orphan, table, column)],
                    parameters=params,
                    notes=(
                        f"The new rows of {table} get only their key: its other columns take "
                        "their defaults (it fails where one is NOT NULL without a default).",
                    ),
                ),
            ),
            Choice(KEEP, f"Keep them: {ref} is not the full list", _keep()),
        ],
    )


def _first_word(c: exp.Expression, variant: str) -> exp.Expression:
    # the first word and the space after it, compared as text: no LIKE, whose % and _ a value may hold
    length = len(variant) + 1
    return exp.EQ(
        this=exp.Substring(this=c.copy(), start=sql.literal(1), length=sql.literal(length)),
        expression=sql.literal(variant + " "),
    )


def _categories(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    cp, d = _column(issue, profile), issue.details
    groups: dict[str, dict[str, int]] = d.get("groups") or {}
    if not groups:
        return _by_hand_offer(issue, "The variants differ in the capitals of words inside labels.")
    c = target.column(cp.name)
    mapping = {v: canon for canon, spellings in groups.items() for v in spellings if v != canon}
    if d.get("part") == "first word":
        ifs = [
            exp.If(
                this=_first_word(c, v),
                true=exp.Concat(
                    expressions=[sql.literal(canon), exp.Substring(this=c.copy(), start=sql.literal(len(v) + 1))]
                ),
            )
            for v, canon in mapping.items()
        ]
        where = sql.any_of(_first_word(c, v) for v in mapping)
    else:
        ifs = [
            exp.If(this=exp.EQ(this=c.copy(), expression=sql.literal(v)), true=sql.literal(canon))
            for v, canon in mapping.items()
        ]
        where = sql.is_in(c.copy(), list(mapping))
    rows = sum(n for canon, g in groups.items() for v, n in g.items() if v != canon)
    canons = list(groups)
    shown = ", ".join(repr(k) for k in canons[:3]) + (", ..." if len(canons) > 3 else "")
    where_part = "" if d.get("part") != "first word" else " (first word)"
    prompt = (
        f"Consolidate {cp.name}{where_part} to the most frequent spelling {canons[0]!r}?"
        if len(canons) == 1
        else f"Consolidate each value of {cp.name}{where_part} to its most frequent spelling ({shown})?"
    )
    return Offer(
        prompt=prompt,
        examples="; ".join(f"{v!r} ({rows_of(groups[k][v])}) -> {k!r}" for v, k in list(mapping.items())[:5]),
        choices=[
            Choice(
                "consolidate",
                "Yes: write every spelling as its most frequent one",
                _scripted(
                    issue,
                    target,
                    "consolidate",
                    "consolidate",
                    f"Rewrite {rows_of(rows)} of {cp.name} to the most frequent spelling of each value.",
                    [sql.update(target, cp.name, exp.Case(ifs=ifs, default=c.copy()), where)],
                    parameters={"column": cp.name, "mapping": mapping, "part": d.get("part", "value")},
                ),
            ),
            Choice(KEEP, "No: the spellings mean different things", _keep()),
        ],
    )


def _sentinels(issue: IssueModel, profile: TableProfile, target: FixTarget) -> Offer:
    cp, d = _column(issue, profile), issue.details
    found: dict[str, int] = d.get("values") or {}
    if not found:
        return _by_hand_offer(issue, "The evidence lists no placeholder.")
    values = [float(v) for v in found] if cp.kind in NUMERIC_KINDS else list(found)
    shown = ", ".join(repr(v) for v in found)
    return Offer(
        prompt=f"Do {shown} in {cp.name} stand for unknown values?",
        examples="; ".join(f"{v!r}: {rows_of(n)}" for v, n in found.items()),
        choices=[
            Choice(
                "set_null",
                "Yes: store them as NULL",
                _scripted(
                    issue,
                    target,
                    "set_null",
                    "set_null",
                    f"Store {shown} in {cp.name} as NULL.",
                    [sql.update(target, cp.name, exp.Null(), sql.is_in(target.column(cp.name), values))],
                    parameters={"column": cp.name, "values": list(found)},
                ),
            ),
            Choice(KEEP, "No: they are real values", _keep()),
        ],
    )


OFFERS: dict[str, Callable[[IssueModel, TableProfile, FixTarget], Offer]] = {
    "outliers": _outliers,
    "out_of_range": _out_of_range,
    "duplicate_keys": _duplicate_keys,
    "duplicate_rows": _duplicate_rows,
    "orphan_references": _orphans,
    "inconsistent_categories": _categories,
    "sentinel_values": _sentinels,
}


# --------------------------------------------------------------------------- the follow-ups


def offer(issue: IssueModel, profile: TableProfile, target: Optional[FixTarget]) -> Offer:
    """What can be offered for ``issue``: its question and 2-4 choices with their scripts.
    ``target`` None: the database speaks no SQL we write, so every fix is by hand."""
    build = OFFERS.get(issue.type)
    if build is None or not issue.affectedColumns or target is None:
        return _by_hand_offer(issue, "")
    try:
        return build(issue, profile, target)
    except (Unscriptable, KeyError, TypeError, ValueError) as exc:
        # evidence that a script cannot carry (a NUL in a name) or that is missing: by hand
        why = str(exc) if isinstance(exc, Unscriptable) else "The evidence is not enough to write a script."
        return _by_hand_offer(issue, why[:200])


def followup(
    found: Offer,
    choices: Optional[list[Choice]] = None,
    *,
    prompt: Optional[str] = None,
    examples: Optional[str] = None,
    source: str = "heuristic",
) -> SmartFixFollowupModel:
    chosen = found.choices if choices is None else choices
    return SmartFixFollowupModel(
        prompt=prompt or found.prompt,
        options=[SmartFixOptionModel(key=c.key, label=c.label) for c in chosen],
        examples=examples if examples is not None else found.examples,
        onResponse={c.key: c.action for c in chosen},
        source=source,
    )


def heuristic_followup(issue: IssueModel, profile: TableProfile, target: Optional[FixTarget]) -> SmartFixFollowupModel:
    return followup(offer(issue, profile, target))


def from_answer(
    found: Offer, *, prompt: str, examples: Optional[str], options: list[tuple[str, str]], source: str
) -> Optional[SmartFixFollowupModel]:
    """A model's follow-up: its question and its labels for the choices it picked (by key, each
    once).  None when it picked fewer than two of the offered choices: the heuristic one stands."""
    offered = {c.key: c for c in found.choices}
    chosen: list[Choice] = []
    for key, label in options:
        if key in offered and all(c.key != key for c in chosen) and label.strip():
            chosen.append(Choice(key, label.strip(), offered[key].action))
    if not 2 <= len(chosen) <= 4 or not prompt.strip():
        return None
    return followup(found, chosen, prompt=prompt.strip(), examples=examples or found.examples, source=source)


def smart_issues(result: AnalysisResultModel) -> list[IssueModel]:
    return [i for i in result.issues if i.category == "smart_fixes"]


def with_followups(
    result: AnalysisResultModel,
    profile: TableProfile,
    target: Optional[FixTarget],
    made: Optional[dict[str, SmartFixFollowupModel]] = None,
) -> AnalysisResultModel:
    """Every smart-fix issue with its follow-up: ``made[issue id]`` when given (a model's), else the
    heuristic one; every other issue without one."""
    made = made or {}
    issues = []
    for issue in result.issues:
        if issue.category != "smart_fixes":
            issues.append(issue.model_copy(update={"followup": None}))
            continue
        found = made.get(issue.id) or heuristic_followup(issue, profile, target)
        issues.append(issue.model_copy(update={"followup": found}))
    return result.model_copy(update={"issues": issues})


def fix_scripts(result: AnalysisResultModel) -> dict[str, str]:
    """file -> script of every fix script of the issues' follow-ups (what the store keeps)."""
    files: dict[str, str] = {}
    for issue in result.issues:
        for action in (issue.followup.onResponse or {}).values() if issue.followup else ():
            if action.file and action.script:
                files[action.file] = action.script
    return files

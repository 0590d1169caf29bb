"""Deterministic data-quality detectors: one `IssueModel` per finding.

Every check is a small aggregate query pushed down through ibis; the profile
(null counts, distinct counts, quantiles, semantic type) decides which checks
are worth a query at all.  A check that fails on one column is logged and
skipped: the other columns are still checked.

Severity and category (seed 001: quick_fixes can be automated, smart_fixes
need business judgement):

  missing_values           seed thresholds (>50% high, 20-50% medium, else low)  quick
  sentinel_values          the same thresholds: a sentinel is a hidden missing   quick
  duplicate_rows           high >10% of rows, medium >1%, else low               quick
  duplicate_keys           high for the table's own id, else medium              smart
                           (which of two records is right is a business call)
  numeric_as_text,         medium: sums, sorts and comparisons go wrong          quick
  date_as_text
  outliers                 medium                                                smart
  inconsistent_categories  medium: group-bys split one value into several        quick
  invalid_format           medium >=5% of values, else low                       quick
  constant_column          low: carries no information                           quick
  out_of_range             high >5% of rows, else medium                         smart
  orphan_references        high >5% of rows, else medium                         smart
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, Callable, Mapping, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core import text
from cataloger_dagster.core.models import ColumnProfile, IssueModel, TableProfile, missing_severity
from cataloger_dagster.core.values import finite_float

log = logging.getLogger(__name__)

STRING_SENTINELS = ("n/a", "na", "#n/a", "-", "--", "?", "null", "nil", "nan", "missing", "undefined")
NUMERIC_SENTINELS = (-999, -9999, -99999, -999999, 9999, 99999, 999999, 9999999)
FORMATS = {
    "email": r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$",
    "url": r"^https?://[^\s/$.?#][^\s]*$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "phone": r"^\+?[0-9][0-9 ().\-]{5,18}[0-9]$",
}
# Names that must not be negative.  Matched as whole words of the column name.
NON_NEGATIVE = {"quantity", "qty", "price", "amount", "total", "count", "age", "weight", "duration",
                "length", "height", "width", "size", "stock", "salary", "cost", "fee", "distance",
                "population", "units", "revenue", "ms", "seconds", "minutes", "hours", "days", "kg"}
# Date columns whose values may legitimately lie in the future.
FUTURE_OK = ("expir", "due", "deliver", "expected", "schedul", "plan", "until", "valid", "end",
             "deadline", "forecast", "next", "renew", "start")
NOT_NUMERIC_TEXT = ("phone", "zip", "postal", "postcode", "iban", "account", "code", "sku", "id")
KEY_NAMES = ("email", "sku", "username", "uuid", "code", "key")
OUTLIER_K = 1.5          # fence = p95 + K * (p95 - p05), on a log scale for positive data
OUTLIER_MAX_RATE = 0.01  # more than this beyond the fence is a heavy tail, not outliers
TYPE_SHARE = 0.9         # share of values that must parse before a text column "is" numbers or dates
FORMAT_SHARE = 0.8       # share that must match a format before the rest count as invalid
CATEGORY_MAX_DISTINCT = 100


@dataclass
class _Ctx:
    table: ibis.Table
    profile: TableProfile
    catalog: Mapping[str, ibis.Table]
    now: datetime
    cache: dict[tuple[str, str], Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.profile.table

    @property
    def rows(self) -> int:
        return self.profile.row_count


def detect_issues(
    table: ibis.Table,
    profile: TableProfile,
    *,
    catalog: Mapping[str, ibis.Table] | None = None,
    now: datetime | None = None,
) -> list[IssueModel]:
    """Run every detector on `table`; `catalog` holds the database's other tables by name."""
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    ctx = _Ctx(table, profile, catalog or {}, now)
    issues: list[IssueModel] = []
    if profile.row_count == 0:
        return issues
    _run(issues, ctx.name, "duplicate_rows", None, lambda: _duplicate_rows(ctx))
    schema = table.schema()
    for col in profile.columns:
        if col.name not in schema:
            log.warning("table %s: profiled column %r is not in the table; skipped", ctx.name, col.name)
            continue
        dtype = schema[col.name]
        for type_, check in _COLUMN_CHECKS:
            _run(issues, ctx.name, type_, col.name, lambda check=check: check(ctx, col, dtype))
    return issues


def _run(issues: list[IssueModel], table: str, type_: str, column: Optional[str],
         fn: Callable[[], Any]) -> None:
    try:
        found = fn()
    except Exception as exc:  # one bad column or backend quirk must not stop the rest
        where = f"{table}.{column}" if column else table
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        log.warning("detector %s skipped on %s: %s: %s", type_, where, type(exc).__name__, first_line)
        return
    if found is not None:
        issues.append(found)


def _issue(ctx: _Ctx, type_: str, column: Optional[str], **fields: Any) -> IssueModel:
    ident = f"{ctx.name}_{type_}" + (f"_{column}" if column else "")
    columns = [column] if column else list(ctx.table.columns)
    return IssueModel(id=ident, type=type_, affectedColumns=columns, **fields)


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "0%"


def _one(table: ibis.Table, **aggs: Any) -> dict[str, Any]:
    return table.aggregate(**aggs).to_pyarrow().to_pylist()[0]


def _is_identifier(name: str) -> bool:
    lname = name.lower()
    return bool(re.search(r"(?:^|_)(?:id|key|uuid|code|sku|no|num|number)$", lname)
                or re.search(r"[a-z]Id$", name))


def _sentinel_expr(col: ibis.Value, name: str) -> ibis.Value:
    values = list(STRING_SENTINELS)
    if set(text.words(name)) & {"country", "code", "state", "region"}:
        values.remove("na")  # 'NA' is Namibia / North America in a code column
    return col.strip().lower().isin(values)


def _usable_strings(ctx: _Ctx, name: str) -> ibis.Table:
    c = ctx.table[name]
    return ctx.table.filter(c.notnull() & (c.strip() != "") & ~_sentinel_expr(c, name))


def _numeric_sentinels(cp: ColumnProfile) -> list[float]:
    return [s for s in NUMERIC_SENTINELS if s in (finite_float(cp.min), finite_float(cp.max))]


# -------------------------------------------------------------- table level


def _duplicate_rows(ctx: _Ctx) -> Optional[IssueModel]:
    t = ctx.table
    schema = t.schema()
    # nested / binary / JSON values cannot be compared by every backend
    comparable = [n for n, d in schema.items() if not (d.is_nested() or d.is_binary() or d.is_json())]
    if not comparable:
        return None
    distinct = int(t.select(*comparable).distinct().count().execute())
    dups = ctx.rows - distinct
    if dups <= 0:
        return None
    frac = dups / ctx.rows
    severity = "high" if frac > 0.1 else "medium" if frac > 0.01 else "low"
    return _issue(
        ctx, "duplicate_rows", None, severity=severity, category="quick_fixes", affectedRows=dups,
        description=f"{dups:,} rows ({_pct(dups, ctx.rows)}) of {ctx.name} repeat another row exactly.",
        suggestedAction=f"Keep one copy of each row (SELECT DISTINCT * FROM {ctx.name}) and find which "
                        "load step inserts rows twice.",
        details={"rows": ctx.rows, "distinct_rows": distinct, "duplicate_rows": dups,
                 "fraction": frac, "compared_columns": comparable},
    )


# -------------------------------------------------------------- column level


def _missing(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    blanks = 0
    if dtype.is_string() and cp.pattern_counts is not None and "blank" in cp.pattern_counts:
        blanks = int(cp.pattern_counts["blank"])
    elif dtype.is_string():
        c = ctx.table[cp.name]
        blanks = int(ctx.table.filter(c.notnull() & (c.strip() == "")).count().execute())
    nans = cp.nan_count or 0
    missing = cp.nulls + blanks + nans
    if missing == 0:
        return None
    frac = missing / ctx.rows
    parts = [f"{cp.nulls:,} NULL"] + ([f"{blanks:,} blank"] if blanks else []) + ([f"{nans:,} NaN"] if nans else [])
    return _issue(
        ctx, "missing_values", cp.name, severity=missing_severity(frac), category="quick_fixes",
        affectedRows=missing,
        description=f"{cp.name} is missing in {missing:,} of {ctx.rows:,} rows ({_pct(missing, ctx.rows)}: "
                    f"{', '.join(parts)}).",
        suggestedAction=(f"Drop or stop relying on {cp.name}: most values are missing." if frac > 0.5 else
                         f"Fill {cp.name} from its source or impute it, and store blanks as NULL."),
        details={"nulls": cp.nulls, "blanks": blanks, "nan": nans, "missing": missing, "fraction": frac},
    )


def _sentinels(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    t, c = ctx.table, ctx.table[cp.name]
    if dtype.is_string():
        hits = t.filter(c.notnull() & _sentinel_expr(c, cp.name))
    elif dtype.is_numeric() and not dtype.is_boolean() and not _is_identifier(cp.name):
        values = _numeric_sentinels(cp)
        if not values:
            return None
        hits = t.filter(c.isin(values))
    else:
        return None
    found = hits.group_by(value=hits[cp.name]).aggregate(n=hits.count()).order_by([ibis.desc("n"), "value"]).limit(10)
    counts = {str(r["value"]): int(r["n"]) for r in found.to_pyarrow().to_pylist()}
    total = sum(counts.values())
    if total == 0:
        return None
    frac = total / ctx.rows
    shown = ", ".join(f"{v!r} ({n:,})" for v, n in counts.items())
    return _issue(
        ctx, "sentinel_values", cp.name, severity=missing_severity(frac), category="quick_fixes",
        affectedRows=total,
        description=f"{cp.name} uses placeholder values for missing data in {total:,} rows "
                    f"({_pct(total, ctx.rows)}): {shown}.",
        suggestedAction=f"Replace {', '.join(repr(v) for v in counts)} in {cp.name} with NULL so counts "
                        "and averages treat them as missing.",
        details={"values": counts, "rows": total, "fraction": frac},
    )


def _candidate_key(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> bool:
    if not (dtype.is_integer() or dtype.is_string() or dtype.is_uuid()) or not cp.count:
        return False
    words = set(text.words(cp.name))
    named = _is_identifier(cp.name) or bool(words & set(KEY_NAMES)) or cp.semantic_type in ("email", "uuid")
    return named and (cp.distinct or 0) >= 0.9 * cp.count


def _duplicate_keys(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not _candidate_key(ctx, cp, dtype):
        return None
    f = ctx.table.filter(ctx.table[cp.name].notnull())
    groups = f.group_by(key=f[cp.name]).aggregate(n=f.count()).filter(lambda g: g.n > 1)
    stats = _one(groups, keys=groups.count(), rows=groups.n.sum())
    keys, rows = int(stats["keys"] or 0), int(stats["rows"] or 0)
    if keys == 0:
        return None
    examples = [r["key"] for r in groups.order_by([ibis.desc("n"), "key"]).limit(5).to_pyarrow().to_pylist()]
    own = cp.name.lower() in ("id", f"{text.singular(ctx.name).lower()}_id")
    return _issue(
        ctx, "duplicate_keys", cp.name, severity="high" if own else "medium", category="smart_fixes",
        affectedRows=rows,
        description=f"{cp.name} looks like a unique key but {keys:,} values repeat, on {rows:,} rows "
                    f"({_pct(rows, ctx.rows)}).",
        suggestedAction=f"Decide which record wins for each repeated {cp.name} (latest, most complete), "
                        f"merge or delete the others, then add a UNIQUE constraint on {cp.name}.",
        details={"duplicated_values": keys, "rows": rows, "examples": [str(e) for e in examples]},
    )


def _text_types(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[dict[str, int]]:
    """Counts of usable values, and of those that parse as numbers / dates."""
    if not dtype.is_string() or not cp.count:
        return None
    if ("text_types", cp.name) in ctx.cache:
        return ctx.cache[("text_types", cp.name)]
    pats = cp.pattern_counts
    if pats and "number" in pats and "date" in pats and pats["number"] + pats["date"] < 0.5 * cp.count:
        return None  # the profile's broader patterns already rule both out: save a scan
    u = _usable_strings(ctx, cp.name)
    c = u[cp.name].strip()
    try:
        counts = {k: int(v or 0) for k, v in _one(
            u, usable=u.count(),
            number=c.try_cast("float64").notnull().sum(),
            date=(c.try_cast("timestamp").notnull() & c.try_cast("float64").isnull()).sum(),
            leading_zero=c.re_search(r"^-?0[0-9]").sum(),
        ).items()}
    except Exception as exc:
        # backends without TRY_CAST: fall back on the profile's pattern counts
        if not pats or "number" not in pats or "date" not in pats:
            raise
        log.info("table %s: %s; using the profile's pattern counts for %s", ctx.name, exc, cp.name)
        usable = cp.count - pats.get("sentinel", 0) - pats.get("blank", 0)
        counts = {"usable": usable, "number": pats["number"], "date": pats["date"], "leading_zero": 0}
    ctx.cache[("text_types", cp.name)] = counts
    return counts


def _numeric_as_text(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or set(text.words(cp.name)) & set(NOT_NUMERIC_TEXT) or _is_identifier(cp.name):
        return None
    counts = _text_types(ctx, cp, dtype)
    if not counts or not counts["usable"] or counts["leading_zero"]:
        return None  # leading zeros mean codes ('007'), which must stay text
    return _stored_as_text(ctx, cp, dtype, counts, "number", "numeric_as_text",
                           "so sums, sorting and comparisons treat them as strings",
                           "a numeric type (TRY_CAST({name} AS DECIMAL))")


def _date_as_text(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string():
        return None
    counts = _text_types(ctx, cp, dtype)
    if not counts or not counts["usable"]:
        return None
    return _stored_as_text(ctx, cp, dtype, counts, "date", "date_as_text",
                           "so date arithmetic and ranges do not work on it",
                           "DATE/TIMESTAMP (TRY_CAST({name} AS DATE))")


def _stored_as_text(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType, counts: dict, kind: str,
                    issue_type: str, so: str, target: str) -> Optional[IssueModel]:
    """The issue of a text column whose usable values are mostly of ``kind`` ("number", "date")."""
    share = counts[kind] / counts["usable"]
    if share < TYPE_SHARE:
        return None
    return _issue(
        ctx, issue_type, cp.name, severity="medium", category="quick_fixes",
        affectedRows=counts[kind],
        description=f"{cp.name} is stored as text ({dtype}) but {_pct(counts[kind], counts['usable'])} "
                    f"of its values are {kind}s, {so}.",
        suggestedAction=f"Convert {cp.name} to {target.format(name=cp.name)} and "
                        "review the values that do not convert.",
        details={**counts, "share": share},
    )


def _outliers(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_numeric() or dtype.is_boolean() or _is_identifier(cp.name):
        return None
    q = cp.quantiles or {}
    p05, p95 = finite_float(q.get("p05")), finite_float(q.get("p95"))
    if p05 is None or p95 is None or p95 <= p05 or (cp.distinct or 0) < 10:
        return None
    c = ctx.table[cp.name].cast("float64")
    if p05 > 0:
        # positive measures (amounts, durations) are skewed: fence on a log scale
        lp05, lp95 = math.log(p05), math.log(p95)
        lo, hi = math.exp(lp05 - OUTLIER_K * (lp95 - lp05)), math.exp(lp95 + OUTLIER_K * (lp95 - lp05))
        beyond = ((c > hi) | ((c > 0) & (c < lo)))
    else:
        lo, hi = p05 - OUTLIER_K * (p95 - p05), p95 + OUTLIER_K * (p95 - p05)
        beyond = (c > hi) | (c < lo)
    sentinels = _numeric_sentinels(cp)
    if sentinels:
        beyond = beyond & ~ctx.table[cp.name].isin(sentinels)
    if dtype.is_floating():
        beyond = beyond & ~c.isnan()
    hits = ctx.table.filter(beyond)
    stats = _one(hits, n=hits.count(), low=c.min(), high=c.max())
    n = int(stats["n"])
    if n == 0 or n > OUTLIER_MAX_RATE * ctx.rows:
        return None
    examples = [r["v"] for r in hits.select(v=c).order_by(ibis.desc("v")).limit(5).to_pyarrow().to_pylist()]
    return _issue(
        ctx, "outliers", cp.name, severity="medium", category="smart_fixes", affectedRows=n,
        description=f"{n:,} values of {cp.name} lie far outside its usual range "
                    f"({p05:g} to {p95:g} for the middle 90%), from {stats['low']:g} to {stats['high']:g}.",
        suggestedAction=f"Check the {n:,} rows of {cp.name} outside [{lo:.4g}, {hi:.4g}] against their "
                        "source; correct entry errors and exclude true extremes from averages.",
        details={"rows": n, "fence_low": lo, "fence_high": hi, "p05": p05, "p95": p95,
                 "min_outlier": stats["low"], "max_outlier": stats["high"], "examples": examples},
    )


def _normal_key(value: str) -> str:
    text = value.casefold().replace("&", " and ")
    return re.sub(r"[\s_\-]+", " ", text).strip()


def _edit1(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:]


def _inconsistent_categories(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or cp.count < 20 or not cp.distinct or cp.distinct > CATEGORY_MAX_DISTINCT:
        return None
    if cp.distinct > 0.5 * cp.count:
        return None  # free text, not a category
    u = _usable_strings(ctx, cp.name)
    # ordered, so that ties and the groups come out the same in every run (the warm run
    # compares its investigation code with the earlier one)
    found = (u.group_by(value=u[cp.name]).aggregate(n=u.count()).order_by("value")
             .limit(CATEGORY_MAX_DISTINCT * 2 + 1))
    counts = {r["value"]: int(r["n"]) for r in found.to_pyarrow().to_pylist()}
    if len(counts) > CATEGORY_MAX_DISTINCT * 2:
        return None
    groups: dict[str, dict[str, int]] = {}
    for value, n in counts.items():
        groups.setdefault(_normal_key(value), {})[value] = n
    # near-duplicates ('canceled' / 'cancelled'): one edit apart, and the rarer one much rarer
    keys = sorted(groups, key=lambda k: -sum(groups[k].values()))
    for i, big in enumerate(keys):
        for small in keys[i + 1:]:
            if big in groups and small in groups and len(small) >= 5 and _edit1(big, small):
                if sum(groups[small].values()) <= 0.25 * sum(groups[big].values()):
                    groups[big].update(groups.pop(small))
    variants = {max(g, key=g.get): g for g in groups.values() if len(g) > 1}
    if not variants:
        return None
    rows = sum(n for canon, g in variants.items() for v, n in g.items() if v != canon)
    shown = "; ".join(" / ".join(repr(v) for v in g) for g in variants.values())
    return _issue(
        ctx, "inconsistent_categories", cp.name, severity="medium", category="quick_fixes",
        affectedRows=rows,
        description=f"{cp.name} spells {len(variants)} value(s) in several ways ({shown}); "
                    f"{rows:,} rows use a non-canonical spelling.",
        suggestedAction=f"Map each variant of {cp.name} to its canonical value "
                        f"({', '.join(repr(k) for k in variants)}), e.g. with trim() and lower(), "
                        "and validate new values against a reference list.",
        details={"groups": {canon: g for canon, g in variants.items()}, "rows": rows},
    )


def _format_of(cp: ColumnProfile) -> Optional[str]:
    if cp.semantic_type in FORMATS:
        return cp.semantic_type
    hinted = [f for f in FORMATS if f in text.words(cp.name)]
    return hinted[0] if hinted else None


def _invalid_format(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or not cp.count:
        return None
    fmt = _format_of(cp)
    if fmt is None:
        return None
    pats = cp.pattern_counts or {}
    if pats.get(fmt, -1) >= cp.count:
        return None  # the profile saw every value match: save a scan
    u = _usable_strings(ctx, cp.name)
    ok = u[cp.name].strip().re_search(FORMATS[fmt])
    stats = _one(u, usable=u.count(), valid=ok.sum())
    usable, valid = int(stats["usable"]), int(stats["valid"] or 0)
    bad = usable - valid
    if not usable or bad == 0 or valid < FORMAT_SHARE * usable:
        return None
    bad_values = u.filter(~ok).select(v=u[cp.name]).distinct().order_by("v")
    examples = [r["v"] for r in bad_values.limit(5).to_pyarrow().to_pylist()]
    frac = bad / usable
    return _issue(
        ctx, "invalid_format", cp.name, severity="medium" if frac >= 0.05 else "low",
        category="quick_fixes", affectedRows=bad,
        description=f"{bad:,} values of {cp.name} ({_pct(bad, usable)}) are not valid {fmt} values, "
                    f"e.g. {', '.join(repr(e) for e in examples[:3])}.",
        suggestedAction=f"Validate {cp.name} as {fmt} at entry; correct the {bad:,} malformed values "
                        "from the source or set them to NULL.",
        details={"format": fmt, "pattern": FORMATS[fmt], "usable": usable, "invalid": bad,
                 "fraction": frac, "examples": examples},
    )


def _constant(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if ctx.rows < 5 or cp.nulls or cp.distinct != 1:
        return None
    c = ctx.table[cp.name]
    if cp.distinct_approximate:
        if int(c.nunique().execute()) != 1:
            return None
    value = cp.top_values[0].value if cp.top_values else c.max().execute()
    return _issue(
        ctx, "constant_column", cp.name, severity="low", category="quick_fixes", affectedRows=ctx.rows,
        description=f"{cp.name} holds the same value ({value!r}) on all {ctx.rows:,} rows.",
        suggestedAction=f"Drop {cp.name} or move it to table-level metadata; if it should vary, "
                        "check the load that fills it.",
        details={"value": str(value), "rows": ctx.rows},
    )


def _out_of_range(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    c = ctx.table[cp.name]
    words = set(text.words(cp.name))
    checks: dict[str, Any] = {}
    if dtype.is_numeric() and not dtype.is_boolean() and not _is_identifier(cp.name):
        sentinel = c.isin(_numeric_sentinels(cp)) if _numeric_sentinels(cp) else ibis.literal(False)
        if words & NON_NEGATIVE and (finite_float(cp.min) is None or finite_float(cp.min) < 0):
            checks["negative"] = (c < 0) & ~sentinel
        if words & {"percent", "pct", "percentage"}:
            checks["outside 0-100"] = ((c < 0) | (c > 100)) & ~sentinel
        if "age" in words:
            checks["age above 130"] = (c > 130) & ~sentinel
    elif dtype.is_date() or dtype.is_timestamp():
        name = cp.name.lower()
        if dtype.is_date():
            future, past = ibis.date((ctx.now + timedelta(days=1)).date()), ibis.date(date(1900, 1, 1))
        else:
            stamp = ctx.now + timedelta(days=1)
            if dtype.timezone is None:
                stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
            future = ibis.literal(stamp, type=dtype)
            past = ibis.literal(datetime(1900, 1, 1, tzinfo=stamp.tzinfo), type=dtype)
        if not any(word in name for word in FUTURE_OK):
            checks["in the future"] = c > future
        checks["before 1900"] = c < past
    if not checks:
        return None
    counts = {k: int(v or 0) for k, v in _one(ctx.table, **{f"c{i}": e.sum() for i, e in enumerate(checks.values())}).items()}
    found = {label: counts[f"c{i}"] for i, label in enumerate(checks) if counts[f"c{i}"]}
    total = sum(found.values())
    if not total:
        return None
    frac = total / ctx.rows
    what = ", ".join(f"{n:,} {label}" for label, n in found.items())
    return _issue(
        ctx, "out_of_range", cp.name, severity="high" if frac > 0.05 else "medium",
        category="smart_fixes", affectedRows=total,
        description=f"{cp.name} has implausible values: {what} ({_pct(total, ctx.rows)} of rows).",
        suggestedAction=f"Correct the {total:,} implausible {cp.name} values from the source (sign "
                        "errors, mistyped years) and add a CHECK constraint for the valid range.",
        details={"counts": found, "rows": total, "fraction": frac, "now": ctx.now.isoformat()},
    )


def _reference_targets(ctx: _Ctx, column: str) -> list[tuple[str, str]]:
    lname = column.lower()
    m = re.match(r"^(.*?)_?(id|code|key)$", lname)
    if not m or not m.group(1):
        return []
    stem, suffix = m.group(1).rstrip("_"), m.group(2)
    if stem == text.singular(ctx.name).lower() or lname == "id":
        return []  # the table's own key
    plurals = {stem, stem + "s", stem + "es", stem[:-1] + "ies" if stem.endswith("y") else stem}
    out = []
    for name, other in ctx.catalog.items():
        if name == ctx.name or name.lower() not in plurals:
            continue
        cols = {c.lower(): c for c in other.columns}
        for candidate in (lname, suffix, f"{text.singular(name).lower()}_{suffix}"):
            if candidate in cols:
                out.append((name, cols[candidate]))
                break
    return out


def _orphans(ctx: _Ctx, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not cp.count or not (dtype.is_integer() or dtype.is_string() or dtype.is_uuid()):
        return None
    for target_name, target_col in _reference_targets(ctx, cp.name):
        target = ctx.catalog[target_name]
        tdtype = target.schema()[target_col]
        if dtype.is_string() != tdtype.is_string():
            continue
        t, c = ctx.table, ctx.table[cp.name]
        values = t.filter(c.notnull()).select(v=c).distinct()
        keys = target.select(k=target[target_col]).distinct()
        missing_values = values.anti_join(keys, values.v == keys.k)
        n_values = int(values.count().execute())
        n_missing = int(missing_values.count().execute())
        if n_values == 0 or (n_values - n_missing) < 0.5 * n_values:
            continue  # too little overlap: not a real reference
        if n_missing == 0:
            return None
        orphan_rows = t.filter(c.notnull()).anti_join(keys, c == keys.k)
        rows = int(orphan_rows.count().execute())
        examples = [r["v"] for r in missing_values.order_by("v").limit(5).to_pyarrow().to_pylist()]
        frac = rows / ctx.rows
        return _issue(
            ctx, "orphan_references", cp.name, severity="high" if frac > 0.05 else "medium",
            category="smart_fixes", affectedRows=rows,
            description=f"{rows:,} rows ({_pct(rows, ctx.rows)}) of {ctx.name} have a {cp.name} with no "
                        f"matching {target_name}.{target_col} ({n_missing:,} distinct values missing).",
            suggestedAction=f"Restore the missing {target_name} rows or correct {cp.name} on those rows; "
                            f"then enforce a foreign key from {ctx.name}.{cp.name} to "
                            f"{target_name}.{target_col}.",
            details={"references": f"{target_name}.{target_col}", "rows": rows, "fraction": frac,
                     "distinct_values": n_values, "missing_values": n_missing,
                     "examples": [str(e) for e in examples]},
        )
    return None


_COLUMN_CHECKS: list[tuple[str, Callable[[_Ctx, ColumnProfile, dt.DataType], Optional[IssueModel]]]] = [
    ("missing_values", _missing),
    ("sentinel_values", _sentinels),
    ("duplicate_keys", _duplicate_keys),
    ("numeric_as_text", _numeric_as_text),
    ("date_as_text", _date_as_text),
    ("outliers", _outliers),
    ("inconsistent_categories", _inconsistent_categories),
    ("invalid_format", _invalid_format),
    ("constant_column", _constant),
    ("out_of_range", _out_of_range),
    ("orphan_references", _orphans),
]

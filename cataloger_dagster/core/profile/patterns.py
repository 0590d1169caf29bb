"""The text patterns a profile counts (email, url, uuid, phone, number, date, placeholder
words, blank and padded values), the expressions that count them, and the semantic type
they give a text column."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core import vocabulary
from cataloger_dagster.core.models import ColumnProfile
from cataloger_dagster.core.profile.kinds import Column

# the values the "sentinel" pattern counts: the commonest placeholders, 'none' and the blank text too
SENTINELS = vocabulary.PROFILED_WORDS

# Full-match regexes, written in the subset shared by RE2 (DuckDB), POSIX ARE
# (PostgreSQL) and Python `re` (ibis's SQLite functions): no lookarounds.
_DATE_RE = (
    r"^([0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"([T ][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"
    r"|[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}"
    r"|[0-9]{1,2}[/.-][0-9]{1,2}[/.-]([0-9]{4}|[0-9]{2})"
    r"|[0-9]{1,2}[ -][A-Za-z]{3,9}[ -][0-9]{2,4}"
    r"|[A-Za-z]{3,9}\.? [0-9]{1,2}, [0-9]{4})$"
)
PATTERN_REGEX = {
    "email": r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
    "url": r"^((https?|ftp)://|www\.)[^ ]+$",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "phone": (
        r"^(\+?[0-9]{1,3}[ .-]?)?(\([0-9]{2,4}\)|[0-9]{2,4})[ .-]?[0-9]{3,4}"
        r"([ .-]?[0-9]{2,4})?$"
    ),
    "number": (
        r"^ *[-+]?(([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]*)?|\.[0-9]+)"
        r"([eE][-+]?[0-9]+)? *$"
    ),
    "date": _DATE_RE,
}
# the patterns counted without regular expressions (every backend has them)
PLAIN_PATTERNS = ("sentinel", "blank", "padded")
# When several patterns pass the threshold, the more specific one wins;
# plain digit strings are numbers, not phones.
_SEMANTIC_ORDER = ("uuid", "email", "url", "date", "number", "phone")
SEMANTIC_THRESHOLD = 0.8
CATEGORY_MAX_DISTINCT = 50

_WS = [" ", "\t", "\n", "\r", "\v", "\f"]
_SENTINEL_START = sorted({w[:1] for w in SENTINELS if w} | {w[:1].upper() for w in SENTINELS if w})


def pattern_exprs(s: ir.StringValue) -> dict[str, ir.BooleanValue]:
    # Cheap guards on the first/last character and the length come first:
    # backends evaluate CASE lazily, so the regexes (and the slow TRIM with a
    # character set) only run on values that could match.  This is most of
    # the speed on big text columns.
    # A guard may let through more values than its regex matches (the regex decides), never
    # fewer.  They are written with = and IN only: a table of 1,000 text columns holds them
    # 1,000 times, and DuckDB plans a range comparison (BETWEEN, <=) or a list of 52 letters
    # a hundred times slower than an equality, which made minutes.
    first, last, n = s.left(1), s.right(1), s.length()
    digit = list("0123456789")
    guards = {
        "email": s.contains("@"),
        "url": s.startswith("http") | s.startswith("ftp") | s.startswith("www."),
        "uuid": n == 36,
        "phone": first.isin(digit + ["+", "("]) & n.isin(range(7, 21)),
        "number": first.isin(digit + ["+", "-", ".", " "]),
        "date": n.isin(range(6, 33)) & (first.isin(digit) | s.contains(", ")),
    }
    exprs = {k: ibis.ifelse(guards[k], s.re_search(rx), False) for k, rx in PATTERN_REGEX.items()}
    edge_ws = first.isin(_WS) | last.isin(_WS)  # a regex here costs a scan per value
    exprs["sentinel"] = ibis.ifelse(
        (n == 0) | (n.isin(range(1, 13)) & first.isin(_SENTINEL_START + _WS)),
        s.strip().lower().isin(list(SENTINELS)),
        False,
    )
    exprs["blank"] = ibis.ifelse(n == 0, True, ibis.ifelse(edge_ws, s.strip() == "", False))
    exprs["padded"] = ibis.ifelse(edge_ws, s.strip() != "", False)
    return exprs


def ones(flag: ir.BooleanValue) -> ir.IntegerValue:
    """How many rows `flag` holds for.  Not `flag.cast("int64").sum()`: PostgreSQL has no
    cast from boolean to bigint, and that failed every text column's pattern counts."""
    return ibis.ifelse(flag, 1, 0).sum()


def pattern_names(c: Column, regex: bool) -> list[str]:
    """The patterns the backend counts; without regular expressions (`regex` False), the
    plain ones (and the others are matched in process: the column's text is marked for it)."""
    if not regex:
        c.local_text = c.expr
        return list(PLAIN_PATTERNS)
    return [*PATTERN_REGEX, *PLAIN_PATTERNS]


def stacked_patterns(columns: list[tuple[int, ir.Table, ir.StringValue]], names: list[str]) -> ir.Table:
    """The pattern counts of several text columns in one query: their values stacked (a UNION
    ALL of one column each, k telling which) and the pattern expressions written once.  Per
    column they would be written once each: a table of 500 text columns held 4,500 of them,
    whose compiling and planning took most of a minute.  One row per column: k, n (its values)
    and a count per pattern in `names`."""
    parts = [t.select(k=ibis.literal(i, "int64"), s=x) for i, t, x in columns]
    stacked = parts[0] if len(parts) == 1 else ibis.union(*parts)
    exprs = pattern_exprs(stacked.s)
    return stacked.group_by("k").aggregate(n=stacked.s.count(), **{p: ones(exprs[p]) for p in names})


def _wanted(c: Column, x: ir.StringValue, regex: bool) -> list[ir.BooleanValue]:
    pats = pattern_exprs(x)
    return [pats[p] for p in pattern_names(c, regex)]


def pattern_counts_grouped(source: ir.Table, x: ir.StringValue, c: Column, regex: bool) -> ir.Table:
    """pattern_counts for few distinct values: the regexes run once per value."""
    g = source.group_by(v=x).aggregate(w=ibis._.count())
    pats = [ibis.ifelse(e, g.w, 0).sum().fill_null(0).cast("string") for e in _wanted(c, g.v, regex)]
    return g.aggregate(v=ibis.literal(",").join(pats), n=ibis.ifelse(g.v.notnull(), g.w, 0).sum())


def pattern_counts(source: ir.Table, x: ir.StringValue, c: Column, regex: bool) -> ir.Table:
    """One row: v = the pattern counts joined by commas, n = values counted."""
    pats = [ones(e).fill_null(0).cast("string") for e in _wanted(c, x, regex)]
    return source.aggregate(v=ibis.literal(",").join(pats), n=x.count())


def semantic_type(p: ColumnProfile) -> str:
    """What a text column holds, by its pattern counts and distinct values."""
    pats = p.pattern_counts or {}
    base = p.count - pats.get("sentinel", 0)
    if base > 0:
        for name in _SEMANTIC_ORDER:
            if pats.get(name, 0) >= SEMANTIC_THRESHOLD * base:
                return name
    if p.distinct is not None and p.count and p.distinct <= CATEGORY_MAX_DISTINCT and p.distinct <= 0.5 * p.count:
        return "category"
    return "text"

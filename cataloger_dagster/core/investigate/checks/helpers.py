"""What the checks share: sent once, before them, in every session script."""

from typing import TYPE_CHECKING

import ibis

if TYPE_CHECKING:  # defined by the session script's setup block, and literals of this block's head
    from cataloger_dagster.core.investigate.checks.session import (
        PLACEHOLDER_MARKS,
        TYPED_PLACEHOLDERS,
        UNKNOWN_WORDS,
        pct,
        t,
    )

# --- the block sent to the sandbox starts here ---
LIMIT = 200_000  # distinct values (or group pairs) a check reads; beyond it, it says so


def outcome(hypothesis, verdict, reason, affected, **evidence):
    return {
        "hypothesis": hypothesis,
        "verdict": verdict,
        "reason": reason,
        "affected": int(affected),
        "evidence": evidence,
    }


# The sandbox has no inflect: these three follow core/grammar.py for the regular nouns and
# verbs the checks use, and a test holds them to it.
def count(n, noun):
    """ "1 row", "2 rows": a number with its noun in the right number."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def verb(n, one, many):
    """The verb agreeing with n subjects: verb(1, "is", "are") is "is"."""
    return one if n == 1 else many


def listing(names):
    """ "a", "a and b", "a, b and c"."""
    names = [str(n) for n in names]
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def share(part, whole):
    """A share as a person writes it."""
    return f"{pct(part, whole):g}%"


def value_counts(expr, where=None, limit=LIMIT, rel=None):
    """[(value, rows)] of an expression, most frequent first, at most `limit` of them."""
    rel = t if rel is None else rel
    rel = rel if where is None else rel.filter(where)
    rel = rel.filter(expr.notnull()).group_by(v=expr).aggregate(n=lambda g: g.count())
    rows = rel.order_by([ibis.desc("n"), "v"]).limit(limit).to_pyarrow().to_pylist()
    return [(r["v"], int(r["n"])) for r in rows]


def as_number(value):
    """A float from a number or from text that holds one (thousands separators allowed), else None."""
    import math

    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value) if not isinstance(value, str) else float(value.strip().replace(",", ""))
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def is_placeholder(value, typed=False):
    """Whether a value stands for "unknown": one of UNKNOWN_WORDS, or one mark repeated ('--',
    '...').  `typed`: among numbers or dates, where TYPED_PLACEHOLDERS ('none', zero dates) are too."""
    key = " ".join(str(value).split()).casefold()
    if key in UNKNOWN_WORDS or (typed and key in TYPED_PLACEHOLDERS):
        return True
    return key != "" and key[0] in PLACEHOLDER_MARKS and key == key[0] * len(key)


def as_date(value):
    """The datetime that text reads as in a common format, else None."""
    from datetime import datetime

    text = " ".join(str(value).split())
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    for fmt in ("%Y/%m/%d", "%m/%d/%Y", "%d/%m/%Y", "%b %d %Y", "%d %b %Y", "%Y/%m/%d %H:%M", "%m/%d/%Y %H:%M"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def text_that_reads(column, placeholders, reads):
    """For text that should hold numbers or dates: (usable rows, rows whose value `reads`, the
    first values that do not), with blanks and the placeholders set aside.  None if the column
    is not text."""
    if not t.schema()[column].is_string():
        return None
    usable = t[column].notnull() & (t[column].strip() != "") & ~t[column].isin(placeholders)
    counts = value_counts(t[column], where=usable)
    n = sum(k for _, k in counts)
    return n, sum(k for v, k in counts if reads(v)), sorted(v for v, _ in counts if not reads(v))[:5]


def quartiles(expr, where):
    """The first and third quartiles of a numeric expression, read by rank: one sort in the
    database (a window every backend has) and two rows back."""
    rel = t.filter(where & expr.notnull()).select(v=expr)
    ranked = rel.mutate(r=ibis.row_number().over(order_by="v"), m=rel.v.count().over())
    rows = (
        ranked.filter((ranked.r == ranked.m // 4) | (ranked.r == (3 * ranked.m) // 4))
        .select("r", "v", q3=ranked.r == (3 * ranked.m) // 4)
        .limit(2)
        .to_pyarrow()
        .to_pylist()
    )
    if not rows:
        return None, None
    at = {bool(r["q3"]): float(r["v"]) for r in rows}
    return at.get(False, at.get(True)), at[True]


def normal_within_groups(v, g, where, beyond):
    """For the values beyond the whole column's fence, in the groups of `g` with ten rows or
    more: how many rows are judged, and how many lie within their own group's fence (1.5
    interquartile ranges).  The groups' quartiles are read by rank, in the database: one query,
    one row back."""
    rel = t.filter(where).select(g=g, v=v)
    whole = ibis.window(group_by="g")
    ranked = rel.mutate(r=ibis.row_number().over(group_by="g", order_by="v"), m=rel.v.count().over(whole))
    fenced = ranked.mutate(
        q1=ranked.v.max(where=ranked.r == ranked.m // 4).over(whole),
        q3=ranked.v.max(where=ranked.r == (3 * ranked.m) // 4).over(whole),
    )
    judged = fenced.filter(beyond(fenced.v) & (fenced.m >= 10))
    iqr = judged.q3 - judged.q1
    inside = (judged.v >= judged.q1 - 1.5 * iqr) & (judged.v <= judged.q3 + 1.5 * iqr)
    stats = judged.aggregate(judged=lambda x: x.count(), hits=inside.ifelse(1, 0).sum()).to_pyarrow().to_pylist()[0]
    return int(stats["judged"] or 0), int(stats["hits"] or 0)


def group_columns(exclude, most=5):
    """Columns that sort rows into a few groups (categories, and the month of a date): where a
    value can be normal within its group though rare in the whole table."""
    schema = t.schema()
    found = []
    candidates = [c for c in t.columns if c not in exclude and not schema[c].is_floating()][:30]
    if not candidates:
        return found
    exprs = {}
    for c in candidates:
        dtype = schema[c]
        if dtype.is_temporal() and (dtype.is_date() or dtype.is_timestamp()):
            exprs[c + " (month)"] = t[c].month()
        elif dtype.is_string() or dtype.is_integer() or dtype.is_boolean():
            exprs[c] = t[c]
    if not exprs:
        return found
    names = list(exprs)
    stats = t.aggregate(**{f"d{i}": exprs[n].nunique() for i, n in enumerate(names)}).to_pyarrow().to_pylist()[0]
    for i, name in enumerate(names):
        if 2 <= int(stats[f"d{i}"] or 0) <= 60:
            found.append((name, exprs[name]))
    return found[:most]


def flagged_among_peers(column, values, group, most=20):
    """For each flagged value of `column`: (its group, the value, its rows, the group's quartiles,
    their geometric mean, the rows of the group's other values within a factor of two, the
    group's other positive values).  The peers are the other positive values of the same group
    (the whole column without `group`); a group with no positive quartiles is skipped."""
    import math

    c = t[column].cast("float64")
    flagged = c.notnull() & c.isin([float(v) for v in values])
    key = t[group].cast("string") if group else ibis.literal("")
    for k, _ in value_counts(key, where=flagged)[:most]:
        peers = ~flagged & c.notnull() & (c > 0) & (key == k)
        q1, q3 = quartiles(c, peers)
        if not q1 or not q3 or q1 <= 0:
            continue
        median = math.sqrt(q1 * q3)
        total = t.filter(peers).count().to_pyarrow().as_py()
        for v, n in value_counts(c, where=flagged & (key == k)):
            near = t.filter(peers & (c >= v / 2) & (c <= v * 2)).count().to_pyarrow().as_py()
            yield k, v, n, (q1, q3), median, near, total

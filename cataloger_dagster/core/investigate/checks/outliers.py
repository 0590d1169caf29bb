"""The check of outliers issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import (
    LIMIT,
    as_number,
    count,
    group_columns,
    normal_within_groups,
    outcome,
    quartiles,
    share,
    value_counts,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import HOLDS_NAN, ROWS, pct, t


# --- the block sent to the sandbox starts here ---
def check_outliers(column, low, high, exclude):
    import math

    hypothesis = f"the values of {column} beyond [{low:g}, {high:g}] are errors, not the tail of its distribution"
    dtype = t.schema()[column]
    # below a fence above zero, only values above zero count: a zero is no low outlier of a skewed column
    is_beyond = lambda v: v > high or (v < low and (v > 0 or low <= 0))
    if dtype.is_string():  # numbers stored as text: read them in Python
        pairs = [
            (as_number(v), k)
            for v, k in value_counts(t[column])
            if str(v).strip() not in map(str, exclude) and as_number(v) is not None
        ]
        capped = len(pairs) >= LIMIT
        values = sorted((v, k) for v, k in pairs)
        total = sum(k for _, k in values)

        def rank(p):
            seen = 0
            for v, k in values:
                seen += k
                if seen > p * total:
                    return v
            return values[-1][0] if values else None

        q1, q3 = rank(0.25), rank(0.75)
    else:
        c = t[column].cast("float64")
        valid = c.notnull() & (~c.isnan() if dtype.is_floating() and HOLDS_NAN else ibis.literal(True))
        if exclude:
            valid = valid & ~t[column].isin(exclude)
        over_fence = lambda x: (x > high) | ((x < low) & (x > 0)) if low > 0 else (x > high) | (x < low)
        beyond = over_fence(c)
        flagged = value_counts(c, where=valid & beyond)
        ends = t.filter(valid & ~beyond).aggregate(hi=c.max(), lo=c.min()).to_pyarrow().to_pylist()[0]
        nearest = [ends[k] for k in ("hi", "lo") if ends[k] is not None]
        pairs = flagged + [(v, 0) for v in nearest]
        capped = len(flagged) >= LIMIT
        q1, q3 = quartiles(c, valid)
    flagged = [(v, k) for v, k in pairs if k and is_beyond(v)]
    n = sum(k for _, k in flagged)
    if not n:
        return outcome(hypothesis, "refuted", "no value lies beyond the fence", 0, rows=0)
    inliers = sorted({v for v, _ in pairs if not is_beyond(v)})
    positive = inliers and min(inliers) >= 0 and all(v >= 0 for v, _ in flagged)
    scale = (lambda v: math.log1p(v)) if positive else (lambda v: v)
    spread = abs(scale(q3) - scale(q1)) if q1 is not None else 0.0

    def isolated_side(values, nearest_inlier):
        """Rows of the flagged values past the first jump wider than 1.5 times the interquartile
        range (on the log scale for a column of positive values), walking outward from the
        nearest ordinary value: a tail that goes on without such a jump is the distribution's own."""
        if not values or nearest_inlier is None or not spread:
            return 0
        last, isolated, jumped = scale(nearest_inlier), 0, False
        for v, k in values:
            if abs(scale(v) - last) > 1.5 * spread:
                jumped = True
            if jumped:
                isolated += k
            last = scale(v)
        return isolated

    high_side = sorted((v, k) for v, k in flagged if v > high)
    low_side = sorted(((v, k) for v, k in flagged if v < low), reverse=True)
    isolated = isolated_side(high_side, max((v for v in inliers if v <= high), default=None)) + isolated_side(
        low_side, min((v for v in inliers if v >= low), default=None)
    )
    top_value, top_rows = max(flagged, key=lambda p: p[1])
    # normal within its group or season? (the group's own quartiles, from all its values)
    explained_by = {}
    if not dtype.is_string():
        for name, g in group_columns({column}):
            judged, hits = normal_within_groups(c, g, valid, over_fence)
            if judged >= 0.5 * n and hits >= 0.8 * judged:
                explained_by[name] = hits
    evidence = dict(
        rows=n,
        percent=pct(n, ROWS),
        fence=[low, high],
        isolated_rows=isolated,
        quartiles=[q1, q3],
        values_beyond=len(flagged),
        most_repeated=[top_value, top_rows],
        normal_within=explained_by,
        examples=sorted({v for v, _ in flagged}, key=lambda v: -abs(v))[:5],
        **({"read": f"the {LIMIT:,} most frequent values"} if capped else {}),
    )
    if explained_by:
        name = next(iter(explained_by))
        return outcome(
            hypothesis,
            "refuted",
            f"{share(explained_by[name], n)} of them are normal within their {name} group",
            n,
            **evidence,
        )
    if not isolated:
        return outcome(
            hypothesis,
            "refuted",
            "they continue the tail of the distribution: no gap wider than 1.5 "
            "interquartile ranges separates them from the ordinary values",
            n,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(isolated, 'row')} {'lies' if isolated == 1 else 'lie'} apart from every other value, and no "
        "category or month of the table makes them normal",
        isolated,
        **evidence,
    )

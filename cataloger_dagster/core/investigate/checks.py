"""The checks the heuristic agent writes: one hypothesis per issue type, tested on evidence the
detector did not use.

Each check is Python source that runs in the sandbox (over the snapshot) and, unchanged, in the
stored script against the real database.  It returns

    {"hypothesis": what is being tested, "verdict": "confirmed" | "refuted" | "inconclusive",
     "reason": the evidence that decided, "affected": the rows the check counts, "evidence": {...}}

A detector says "this column has N values beyond a fence"; the check asks whether that means
what the issue claims: are the values isolated from the rest, or normal within their group or
season; are the repeated keys copies of one row or different things sharing a name; are the
"variants" numbers or dates, or spellings sharing what their rows say; does a placeholder stand
alone in its cell, among rows that are incomplete elsewhere.  Reading is bounded: value counts
and group pairs are capped (HELPERS' LIMIT) and say so when the cap is reached.
"""

from __future__ import annotations

HELPERS = '''\
LIMIT = 200_000   # distinct values (or group pairs) a check reads; beyond it, it says so


def outcome(hypothesis, verdict, reason, affected, **evidence):
    return {"hypothesis": hypothesis, "verdict": verdict, "reason": reason,
            "affected": int(affected), "evidence": evidence}


def count(n, noun):
    """"1 row", "2 rows": a number with its noun in the right number."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


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
    rows = ranked.filter((ranked.r == ranked.m // 4) | (ranked.r == (3 * ranked.m) // 4)).select(
        "r", "v", q3=ranked.r == (3 * ranked.m) // 4).limit(2).to_pyarrow().to_pylist()
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
    fenced = ranked.mutate(q1=ranked.v.max(where=ranked.r == ranked.m // 4).over(whole),
                           q3=ranked.v.max(where=ranked.r == (3 * ranked.m) // 4).over(whole))
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
'''

CHECKS: dict[str, str] = {
    "missing_values": '''\
def check_missing_values(column):
    c = t[column]
    dtype = t.schema()[column]
    missing = c.isnull()
    if dtype.is_string():
        # `|| ''`: ibis takes a PostgreSQL enum for text, but the database has no trim of it
        missing = missing | (c.concat("").strip() == "")
    if dtype.is_floating() and HOLDS_NAN:
        missing = missing | c.isnan()
    n = int(t.filter(missing).count().execute())
    return outcome("values of the column are missing (NULL, blank or NaN)",
                   "confirmed" if n else "refuted",
                   f"{n} of {count(ROWS, 'row')} hold no value" if n else "every row holds a value",
                   n, missing=n, rows=ROWS, percent=pct(n, ROWS))
''',
    "sentinel_values": '''\
UNKNOWN_WORDS = {"na", "n/a", "#n/a", "null", "nil", "nan", "unknown", "missing", "undefined", "not available",
                 "not rated", "tbd", "?", "--"}


def check_sentinel_values(column, values):
    hypothesis = f"{sorted(map(str, values))} stand for an unknown value, not for themselves"
    c = t[column]
    text = t.schema()[column].is_string()
    if text:
        wanted = sorted({str(v).strip().lower() for v in values})
        whole = c.strip().lower().isin(wanted)
    else:
        wanted = [float(v) for v in values if as_number(v) is not None]
        whole = c.isin(wanted) if wanted else ibis.literal(False)
    counts = {str(v): n for v, n in value_counts(c, where=whole)}
    n = sum(counts.values())
    if not n:
        return outcome(hypothesis, "refuted", "no cell holds these values on its own: they are words inside "
                       "longer text, which is content", 0, whole_cells=0)
    # the other values: are they numbers (then a word among them is a placeholder)?
    others = value_counts(c, where=~whole & c.notnull(), limit=5000)
    other_rows = sum(k for _, k in others) or 1
    numeric_share = sum(k for v, k in others if as_number(v) is not None) / other_rows
    # the rows holding the value: are they incomplete elsewhere (more NULLs than the other rows)?
    neighbours = [x for x in t.columns if x != column][:40]
    lift_of = {}
    if neighbours:
        stats = t.group_by(hit=whole).aggregate(
            rows=lambda g: g.count(), **{f"n{i}": t[x].isnull().sum() for i, x in enumerate(neighbours)}
        ).to_pyarrow().to_pylist()
        by = {bool(r["hit"]): r for r in stats if r["hit"] is not None}
        if True in by and False in by:
            for i, x in enumerate(neighbours):
                inside = int(by[True][f"n{i}"] or 0) / by[True]["rows"]
                outside = int(by[False][f"n{i}"] or 0) / by[False]["rows"]
                if int(by[True][f"n{i}"] or 0) >= 3 and inside >= 2 * outside + 0.05:
                    lift_of[x] = [round(inside, 3), round(outside, 3)]
    levels = len(others) + len(counts)
    evidence = dict(whole_cells=counts, rows=ROWS, percent=pct(n, ROWS), other_values_numeric=round(numeric_share, 3),
                    incomplete_elsewhere=lift_of)
    if text and numeric_share >= 0.9:
        return outcome(hypothesis, "confirmed", f"{count(n, 'cell')} hold a word in a column whose other values are "
                       f"numbers ({share(numeric_share * other_rows, other_rows)})", n, **evidence)
    meaning = [w for w in counts if w.strip().lower() in UNKNOWN_WORDS]
    if text and meaning:
        return outcome(hypothesis, "confirmed", f"{meaning} fill whole cells and say 'unknown' in so many "
                       "words", n, **evidence)
    if text and levels <= 20 and n > other_rows:
        return outcome(hypothesis, "inconclusive", "it is the most common level of a small category: as "
                       "likely a value of its own (such as 'no damage') as a placeholder", n, **evidence)
    if not text and wanted:
        # a number repeated outside the range of every other value is a code, not a measurement
        rest = t.filter(~whole & c.notnull()).aggregate(lo=c.min(), hi=c.max()).to_pyarrow().to_pylist()[0]
        outside = [v for v in wanted if rest["lo"] is not None and (v < rest["lo"] or v > rest["hi"])]
        evidence["other_values_range"] = [rest["lo"], rest["hi"]]
        if outside and n >= 2:
            return outcome(hypothesis, "confirmed", f"{count(n, 'row')} repeat {outside[0]:g}, outside the range of every "
                           f"other value ({rest['lo']:g} to {rest['hi']:g})", n, **evidence)
    if lift_of:
        return outcome(hypothesis, "confirmed", f"the rows holding it lack other values more often "
                       f"({', '.join(f'{k}: {v[0]:.0%} against {v[1]:.0%}' for k, v in list(lift_of.items())[:3])})",
                       n, **evidence)
    return outcome(hypothesis, "inconclusive", "the value fills whole cells, but neither the other values nor "
                   "the rows around it say it means 'unknown'", n, **evidence)
''',
    "duplicate_rows": '''\
def check_duplicate_rows(columns):
    distinct = int(t.select(*columns).distinct().count().execute())
    extra = ROWS - distinct
    groups = t.group_by(columns).aggregate(copies=lambda g: g.count()).filter(lambda g: g.copies > 1)
    examples = rows_of(groups.order_by([ibis.desc("copies"), *columns]), 3)
    return outcome("some rows are copies of others in every compared column",
                   "confirmed" if extra else "refuted",
                   f"{count(extra, 'row')} repeat another in all {len(columns)} columns" if extra else "no row repeats",
                   extra, duplicate_rows=extra, rows=ROWS, percent=pct(extra, ROWS), examples=examples)
''',
    "duplicate_keys": '''\
def check_duplicate_keys(columns):
    columns = [columns] if isinstance(columns, str) else list(columns)
    hypothesis = f"{', '.join(columns)} identify a row, and the repeated values are errors"
    f = t.filter(ibis.and_(*[t[c].notnull() for c in columns]))
    present = int(f.count().execute())
    groups = f.group_by(columns).aggregate(n=lambda g: g.count()).filter(lambda g: g.n > 1)
    stats = groups.aggregate(keys=lambda g: g.count(), rows=lambda g: g.n.sum()).to_pyarrow().to_pylist()[0]
    keys, rows = int(stats["keys"] or 0), int(stats["rows"] or 0)
    if not keys:
        return outcome(hypothesis, "refuted", "every value is unique", 0, repeated_values=0)
    examples = rows_of(groups.order_by([ibis.desc("n"), *columns]))
    # the repeated rows: copies of one row, or rows that differ (and in which columns)?
    others = [c for c in t.columns if c not in columns][:60]
    repeated = f.semi_join(groups, columns) if hasattr(f, "semi_join") else f.join(groups, columns)
    copies = int(repeated.select(*columns, *others).distinct().count().execute()) if others else keys
    differ = []
    if others:
        spread = repeated.group_by(columns).aggregate(**{f"d{i}": repeated[c].nunique() for i, c in enumerate(others)})
        top = spread.aggregate(**{f"d{i}": spread[f"d{i}"].max() for i in range(len(others))}).to_pyarrow().to_pylist()[0]
        differ = [c for i, c in enumerate(others) if int(top[f"d{i}"] or 0) > 1]
    part = rows / present if present else 0.0
    schema = t.schema()
    textual = [c for c in columns if schema[c].is_string()]
    spaced = textual and int(f.filter(ibis.or_(*[f[c].contains(" ") for c in textual])).count().execute()) > 0.5 * present
    evidence = dict(repeated_values=keys, rows=rows, percent=pct(rows, present), distinct_rows_among_them=copies,
                    columns_that_differ=differ[:10], examples=[r[columns[0]] if len(columns) == 1
                                                               else {c: r[c] for c in columns} for r in examples])
    if copies == keys:
        return outcome(hypothesis, "confirmed", f"the {count(rows, 'row')} sharing {count(keys, 'value')} are copies of each other "
                       "in every column: true duplicates", rows, **evidence)
    if any(schema[c].is_floating() for c in columns):
        return outcome(hypothesis, "refuted", "a measured (floating) value is no key: equal measurements differ "
                       "in their other columns", rows, **evidence)
    if spaced and len(differ) >= max(1, len(others) // 2):
        return outcome(hypothesis, "refuted", f"the values are names, and the rows sharing one differ in "
                       f"{len(differ)} of {len(others)} other columns: different things with one name", rows, **evidence)
    # text like a code or an e-mail (no spaces, no number, no 'NA'): an identifier
    coded = textual and not spaced and not any(
        as_number(v) is not None or str(v).strip().lower() in ("", "na", "n/a", "null", "none")
        for r in examples for v in ([r[columns[0]]] if len(columns) == 1 else [r[c] for c in textual]))
    if part <= 0.05 and coded:
        return outcome(hypothesis, "confirmed", f"an identifier written as text, unique but for {keys} "
                       f"values ({share(rows, present)} of rows) whose rows differ: two records claim one "
                       "identifier", rows, **evidence)
    if part <= 0.01:
        return outcome(hypothesis, "confirmed", f"unique but for {count(keys, 'value')} ({share(rows, present)} of rows), "
                       f"whose rows differ in {', '.join(differ[:3]) or 'nothing'}", rows, **evidence)
    if part > 0.05:
        return outcome(hypothesis, "refuted", f"{share(rows, present)} of rows share a value with another and "
                       f"differ in {len(differ)} columns: the column is not a key", rows, **evidence)
    return outcome(hypothesis, "inconclusive", f"{share(rows, present)} of rows repeat a value: too many for a "
                   "few slips, too few to say the column is no key", rows, **evidence)
''',
    "numeric_as_text": '''\
def check_numeric_as_text(column, placeholders):
    import re
    hypothesis = f"{column} holds numbers, stored as text"

    def number(value):
        v = value.strip()
        return not re.match(r"^[+-]?0\\d", v) and as_number(v) is not None   # leading zeros: a code

    found = text_that_reads(column, placeholders, number)
    if found is None:
        return outcome(hypothesis, "refuted", f"the column is typed {t.schema()[column]}", 0,
                       type=str(t.schema()[column]))
    n, numbers, others = found
    ok = n and numbers / n >= 0.9
    return outcome(hypothesis, "confirmed" if ok else "refuted",
                   f"{share(numbers, n)} of the values read as numbers once {placeholders or 'nothing'} is set aside",
                   ROWS if ok else 0, numbers=numbers, usable=n, percent=pct(numbers, n),
                   placeholders_set_aside=placeholders, not_numbers=others)
''',
    "date_as_text": '''\
def check_date_as_text(column, date_format, placeholders):
    from datetime import datetime
    hypothesis = f"{column} holds dates, stored as text"

    def parses(value):
        text = " ".join(value.split())
        try:
            if date_format == "ISO 8601":
                datetime.fromisoformat(text.replace("Z", "+00:00"))
            else:
                datetime.strptime(text, date_format)
            return True
        except ValueError:
            return False

    found = text_that_reads(column, placeholders, parses)
    if found is None:
        return outcome(hypothesis, "refuted", f"the column is typed {t.schema()[column]}", 0,
                       type=str(t.schema()[column]))
    n, dates, others = found
    ok = n and dates / n >= 0.9
    return outcome(hypothesis, "confirmed" if ok else "refuted",
                   f"{share(dates, n)} of the values read as dates in the format {date_format}",
                   ROWS if ok else 0, dates=dates, usable=n, percent=pct(dates, n), format=date_format,
                   not_dates=others)
''',
    "outliers": '''\
def check_outliers(column, low, high, exclude):
    import math
    hypothesis = f"the values of {column} beyond [{low:g}, {high:g}] are errors, not the tail of its distribution"
    dtype = t.schema()[column]
    # below a fence above zero, only values above zero count: a zero is no low outlier of a skewed column
    is_beyond = lambda v: v > high or (v < low and (v > 0 or low <= 0))
    if dtype.is_string():   # numbers stored as text: read them in Python
        pairs = [(as_number(v), k) for v, k in value_counts(t[column])
                 if str(v).strip() not in map(str, exclude) and as_number(v) is not None]
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
    isolated = (isolated_side(high_side, max((v for v in inliers if v <= high), default=None))
                + isolated_side(low_side, min((v for v in inliers if v >= low), default=None)))
    top_value, top_rows = max(flagged, key=lambda p: p[1])
    # normal within its group or season? (the group's own quartiles, from all its values)
    explained_by = {}
    if not dtype.is_string():
        for name, g in group_columns({column}):
            judged, hits = normal_within_groups(c, g, valid, over_fence)
            if judged >= 0.5 * n and hits >= 0.8 * judged:
                explained_by[name] = hits
    evidence = dict(rows=n, percent=pct(n, ROWS), fence=[low, high], isolated_rows=isolated,
                    quartiles=[q1, q3], values_beyond=len(flagged), most_repeated=[top_value, top_rows],
                    normal_within=explained_by, examples=sorted({v for v, _ in flagged}, key=lambda v: -abs(v))[:5],
                    **({"read": f"the {LIMIT:,} most frequent values"} if capped else {}))
    if explained_by:
        name = next(iter(explained_by))
        return outcome(hypothesis, "refuted", f"{share(explained_by[name], n)} of them are normal within their "
                       f"{name} group", n, **evidence)
    if not isolated:
        return outcome(hypothesis, "refuted", "they continue the tail of the distribution: no gap wider than 1.5 "
                       "interquartile ranges separates them from the ordinary values", n, **evidence)
    return outcome(hypothesis, "confirmed", f"{count(isolated, 'row')} {'lies' if isolated == 1 else 'lie'} apart from every other value, and no "
                   "category or month of the table makes them normal", isolated, **evidence)
''',
    "inconsistent_categories": '''\
def check_inconsistent_categories(column, groups, part, case_variants=None):
    hypothesis = "the rarer values are other spellings of one category"
    if case_variants and not groups:
        hypothesis = "the labels write one word in different letter case"
        forms = {}
        for word, by_form in case_variants.items():
            labels = sorted({label for found in by_form.values() for label in found})
            counts = dict(value_counts(t[column], where=t[column].isin(labels)))
            forms[word] = {form: sum(counts.get(label, 0) for label in found) for form, found in by_form.items()}
        split = {w: f for w, f in forms.items() if sum(1 for n in f.values() if n) > 1}
        rows = sum(sum(f.values()) - max(f.values()) for f in split.values())
        return outcome(hypothesis, "confirmed" if split else "refuted",
                       f"{', '.join(f'{w!r} as ' + ' and '.join(map(repr, f)) for w, f in split.items())} in "
                       "the labels of one column" if split else "one writing of each word",
                       rows, forms=forms, rows_with_variant=rows, percent=pct(rows, ROWS))
    variants = sorted({v for g in groups.values() for v in g})
    value = t[column].re_extract(r"^(\\S+)", 1) if part == "first word" else t[column]
    counts = dict(value_counts(value, where=value.isin(variants)))
    spellings = {canon: {v: counts[v] for v in g if v in counts} for canon, g in groups.items()}
    split = {canon: s for canon, s in spellings.items() if len(s) > 1}
    # numbers and dates one edit apart are different values, never spellings
    words = {canon: s for canon, s in split.items()
             if not all(as_number(v) is not None or as_date(v) for v in s)}
    rows = sum(n for canon, s in words.items() for v, n in s.items() if v != max(s, key=s.get))
    evidence = dict(spellings=split, rows_with_variant=rows, percent=pct(rows, ROWS),
                    numbers_or_dates=sorted(set(split) - set(words)))
    if not split:
        return outcome(hypothesis, "refuted", "the table holds no more than one spelling of each", 0, **evidence)
    if not words:
        return outcome(hypothesis, "refuted", "the values are numbers or dates, which differ in value, not in "
                       "spelling", 0, **evidence)
    # the rows of a variant share what the rows of its main spelling say: the same case-folded
    # label, the same rest of the label after the first word, or the same specific value elsewhere
    support = {}
    rest = t[column].re_extract(r"^\\S+\\s+(.*)$", 1) if part == "first word" else None
    others = [c for c in t.columns if c != column and t.schema()[c].is_string()][:10]
    for canon, s in words.items():
        main = max(s, key=s.get)
        for variant in s:
            if variant == main:
                continue
            if variant.lower().replace("-", " ") == main.lower().replace("-", " "):
                support[variant] = "the same label in other letter case or punctuation"
                continue
            for name, expr in ([("rest of the label", rest)] if rest is not None else []) + [(c, t[c]) for c in others]:
                mine = t.filter(value == variant).select(x=expr).distinct()
                theirs = t.filter(value == main).select(y=expr).distinct()
                both = mine.join(theirs, mine.x == theirs.y).select("x")
                # specific: a value that goes with three categories at most (same model, same maker)
                spread = (t.select(x=expr, c=value).distinct().join(both, "x").group_by("x")
                          .aggregate(k=lambda g: g.count()).filter(lambda g: g.k <= 3))
                shared = [r["x"] for r in spread.limit(3).to_pyarrow().to_pylist() if r["x"] not in (None, "")]
                if shared:
                    support[variant] = f"its rows share {name} {shared[0]!r} with rows of {main!r}"
                    break
    evidence["shared"] = support
    if support:
        first = next(iter(support.items()))
        return outcome(hypothesis, "confirmed", f"{len(support)} variants share what their rows say with the "
                       f"main spelling ({first[0]!r}: {first[1]})", rows, **evidence)
    return outcome(hypothesis, "inconclusive", "the values are close in spelling, but nothing else in their rows "
                   "ties them to the main spelling", rows, **evidence)
''',
    "invalid_format": '''\
def check_invalid_format(column, pattern, ignore):
    s = t[column].strip()
    usable = t.filter(t[column].notnull() & (s != "") & ~s.lower().isin(ignore))
    ok = usable[column].strip().re_search(pattern)
    stats = usable.aggregate(usable=lambda g: g.count(), valid=ok.sum()).to_pyarrow().to_pylist()[0]
    n, valid = int(stats["usable"]), int(stats["valid"] or 0)
    bad = n - valid
    examples = [r[column] for r in rows_of(usable.filter(~ok).select(column).distinct().order_by(column))]
    return outcome(f"values of {column} break the format the column follows ({pattern})",
                   "confirmed" if bad else "refuted",
                   f"{bad} of {count(n, 'value')} do not match it" if bad else "every value matches it",
                   bad, invalid=bad, usable=n, percent=pct(bad, n), examples=examples)
''',
    "constant_column": '''\
def check_constant_column(column):
    stats = t.aggregate(distinct=t[column].nunique(), nulls=t[column].isnull().sum()).to_pyarrow().to_pylist()[0]
    distinct, nulls = int(stats["distinct"]), int(stats["nulls"] or 0)
    value = t[column].max().execute() if distinct == 1 else None
    constant = distinct == 1 and not nulls
    return outcome(f"{column} holds one value on every row", "confirmed" if constant else "refuted",
                   f"every row holds {value!r}" if constant else f"{count(distinct, 'value')} and {nulls} NULLs",
                   ROWS if constant else 0, distinct=distinct, nulls=nulls, value=value, rows=ROWS)
''',
    "out_of_range": '''\
def check_out_of_range(column, rules, now, exclude):
    import datetime as _dt
    hypothesis = f"{column} follows {', '.join(rules)}, and the rows breaking it are errors"
    c = t[column]
    when = _dt.datetime.fromisoformat(now)
    dtype = t.schema()[column]
    def stamp(moment):
        if dtype.is_string():
            return None
        if dtype.is_date():
            return ibis.date(moment.date())
        if dtype.timezone is None:
            moment = moment.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return ibis.literal(moment, type=dtype)
    conditions = {
        "negative": lambda: c < 0,
        "outside 0-100": lambda: (c < 0) | (c > 100),
        "age above 130": lambda: c > 130,
        "in the future": lambda: c > stamp(when + _dt.timedelta(days=1)),
        "before 1900": lambda: c < stamp(_dt.datetime(1900, 1, 1, tzinfo=when.tzinfo)),
    }
    keep = ~c.isin(exclude) if exclude else ibis.literal(True)
    if dtype.is_string():   # dates or numbers stored as text: read them in Python
        floor = _dt.datetime(1900, 1, 1)
        tests = {"negative": lambda v: as_number(v) is not None and as_number(v) < 0,
                 "outside 0-100": lambda v: as_number(v) is not None and not 0 <= as_number(v) <= 100,
                 "age above 130": lambda v: as_number(v) is not None and as_number(v) > 130,
                 "in the future": lambda v: as_date(v) is not None
                 and as_date(v).replace(tzinfo=None) > (when + _dt.timedelta(days=1)).replace(tzinfo=None),
                 "before 1900": lambda v: as_date(v) is not None and as_date(v).replace(tzinfo=None) < floor}
        pairs = value_counts(c, where=keep)
        counts = {rule: sum(k for v, k in pairs if tests[rule](v)) for rule in rules}
        present = sum(k for _, k in pairs)
    else:
        counts = {rule: int(t.filter(conditions[rule]() & keep).count().execute()) for rule in rules}
        present = int(t.filter(c.notnull() & keep).count().execute())
    n = sum(counts.values())
    part = n / present if present else 0.0
    evidence = dict(rows=n, percent=pct(n, present), by_rule=counts)
    if not n:
        return outcome(hypothesis, "refuted", "no row breaks the rule", 0, **evidence)
    if part > 0.2:
        return outcome(hypothesis, "refuted", f"{share(n, present)} of the values break it: the column does not "
                       "follow this rule", n, **evidence)
    if part <= 0.05:
        return outcome(hypothesis, "confirmed", f"{count(n, 'row')} ({share(n, present)}) break a rule the rest of the "
                       "column keeps", n, **evidence)
    return outcome(hypothesis, "inconclusive", f"{share(n, present)} of the values break it: more than slips, "
                   "fewer than a column that ignores the rule", n, **evidence)
''',
    "orphan_references": '''\
def check_orphan_references(column, other_table, other_column, match):
    import re
    hypothesis = f"every {column} names a row of {other_table}.{other_column}"
    present = t.filter(t[column].notnull())
    if match == "digits":   # text codes against integer keys: compare their digits
        def digits(v):
            s = str(v).strip()
            return (s.lstrip("0") or "0") if s.isdigit() else None
        keys = {digits(r["k"]) for r in con.table(other_table).select(k=lambda r: r[other_column]).distinct()
                .to_pyarrow().to_pylist()}
        counts = value_counts(t[column])
        missing = sorted(str(v) for v, _ in counts if digits(v) not in keys)
        n = sum(k for v, k in counts if digits(v) not in keys)
        distinct = len(missing)
    else:
        keys = con.table(other_table).select(k=lambda r: r[other_column]).distinct()
        orphans = present.anti_join(keys, present[column] == keys.k)
        n = int(orphans.count().execute())
        missing = [str(v) for v, _ in value_counts(orphans[column], limit=1000, rel=orphans)]
        distinct = int(orphans.select(v=orphans[column]).distinct().count().execute())
    # do the missing keys follow a pattern (one shape, one ending)?
    shape = lambda v: re.sub(r"[A-Za-z]", "A", re.sub(r"[0-9]", "9", v))
    shapes = {}
    for v in missing:
        shapes[shape(v)] = shapes.get(shape(v), 0) + 1
    endings = {}
    for v in missing:
        endings[v[-3:]] = endings.get(v[-3:], 0) + 1
    pattern = {k: v for k, v in endings.items() if v >= max(2, 0.5 * len(missing))}
    evidence = dict(rows=n, percent=pct(n, ROWS), distinct_missing=distinct, references=f"{other_table}.{other_column}",
                    examples=missing[:5], shapes=dict(sorted(shapes.items(), key=lambda p: -p[1])[:3]),
                    common_ending=pattern)
    if not n:
        return outcome(hypothesis, "refuted", f"every value is in {other_table}.{other_column}", 0, **evidence)
    why = f"{count(n, 'row')} name {count(distinct, 'value')} absent from {other_table}.{other_column}"
    if pattern:
        why += f", most ending in {next(iter(pattern))!r}: a class of codes the target does not hold"
    return outcome(hypothesis, "confirmed", why, n, **evidence)
''',
    "empty_table": '''\
def check_empty_table():
    return outcome("the table holds no rows", "confirmed" if ROWS == 0 else "refuted",
                   "the table holds no rows" if ROWS == 0 else f"it holds {count(ROWS, 'row')}",
                   0, rows=ROWS)
''',
    # issues an LLM adds with a type no check is written for yet
    "generic": '''\
def check_generic(columns):
    stats = t.aggregate(**{f"{c}_nulls": t[c].isnull().sum() for c in columns},
                        **{f"{c}_distinct": t[c].nunique() for c in columns}).to_pyarrow().to_pylist()[0]
    return outcome("the issue an agent described (no check is written for its type)", "inconclusive",
                   "no check tests this kind of issue; the columns' counts are shown", 0,
                   rows=ROWS, **{k: int(v or 0) for k, v in stats.items()})
''',
}

"""References found from values, not names: a column whose values are (nearly all) the keys of
another table's unique column is a reference, and its values with no match are orphans.

Any column names, and compatible types: text codes ('01001') against integer keys (1001)
match on their digits.  Candidates are pruned with the profiles (types, distinct counts,
ranges); each survivor is verified exactly in the database.
"""

from __future__ import annotations

import functools
import heapq
import zlib
from dataclasses import dataclass
from typing import Any, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core import portable, text
from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.issues.detectors.context import (
    Context,
    count,
    is_identifier,
    issue,
    might_be_placeholder,
    one,
    pct,
)
from cataloger_dagster.core.models import ColumnProfile, IssueModel, TableProfile

MIN_DISTINCT = 5  # fewer distinct values match some key by chance
MIN_INCLUSION = 0.8  # share of the distinct values found among the keys
CROSS_TYPE_MAX_KEYS = 500_000  # keys pulled to the host to match text codes against numbers
KEY_COLUMNS_PER_QUERY = 100
MAX_PLACEHOLDERS = 100  # unmatched values that could be placeholders, read to set them apart
APPROXIMATELY_UNIQUE = 0.8  # a HyperLogLog count this near the rows may be a key (it errs by up to ~10%)


@dataclass(frozen=True)
class Key:
    table: str
    column: str
    dtype: dt.DataType
    distinct: int
    low: Any
    high: Any
    shortest: Optional[int] = None  # text keys: their lengths, as the database counts them
    longest: Optional[int] = None


class Unopened(Exception):
    """A table of the catalog that cannot be opened (the catalog logged why): it is left out."""


class UnreadableTable(Exception):
    """Another table whose keys could not be read: the search is incomplete, and says which table.

    Its message is ours (the table's name and the error's kind), never the database's text,
    which may quote values."""

    def __init__(self, table: str, error: BaseException) -> None:
        super().__init__(f"table {table!r} could not be read ({type(error).__name__} from the database)")


def _other(ctx: Context, name: str) -> ibis.Table:
    """Another table with its columns as every stage reads them (a mixed SQLite column as text)."""
    if ("other", name) not in ctx.cache:
        table = ctx.catalog.get(name)
        if table is None:
            raise Unopened(name)
        columns = list(table.columns)
        mixed: dict[str, str] = {}
        if portable.backend_name(table) == "sqlite":  # the only backend with mixed columns
            for start in range(0, len(columns), KEY_COLUMNS_PER_QUERY):  # SQLite's column limit again
                mixed.update(
                    portable.sqlite_mixed_reasons(table.select(columns[start : start + KEY_COLUMNS_PER_QUERY]))
                )
        # this table's checks only: an ibis table never crosses tables (its connection may close)
        ctx.cache[("other", name)] = portable.portable(table, mixed)[0]
    return ctx.cache[("other", name)]


def _keys_of(ctx: Context, name: str) -> list[Key]:
    """The unique, non-empty integer or text columns of another table: from its stored profile
    when there is one (the table is then opened only if a candidate needs verifying), else by
    one aggregate query."""
    cache_key = ("keys", name)
    if cache_key not in ctx.shared:
        try:
            ctx.shared[cache_key] = _find_keys(ctx, name)
        except Unopened:
            raise
        except Exception as exc:  # read once: every column (and table) after meets the same error
            unreadable = UnreadableTable(name, exc)
            unreadable.__cause__ = exc
            ctx.shared[cache_key] = unreadable
    found = ctx.shared[cache_key]
    if isinstance(found, UnreadableTable):
        raise found
    return found


def _find_keys(ctx: Context, name: str) -> list[Key]:
    profile: Optional[TableProfile] = ctx.profiles.get(name)
    if profile is not None:
        keys: list[Key] = []
        # nearly unique by an approximate count, or not counted at all (the profile could not
        # read the column): only a count in the database tells
        counted = [d.column for d in profile.degradations if d.stage == "profile" and d.column]
        for cp in profile.columns:
            dtype = _profiled_type(cp)
            if dtype is None or not (dtype.is_integer() or dtype.is_string()) or cp.name in counted:
                continue
            if cp.count and not cp.nulls and (cp.distinct or 0) >= MIN_DISTINCT:
                if not cp.distinct_approximate and cp.distinct == cp.count:
                    lengths = cp.length if dtype.is_string() and cp.length else None
                    keys.append(
                        Key(
                            name,
                            cp.name,
                            dtype,
                            cp.distinct,
                            cp.min,
                            cp.max,
                            lengths.min if lengths else None,
                            lengths.max if lengths else None,
                        )
                    )
                elif cp.distinct_approximate and (cp.distinct or 0) >= APPROXIMATELY_UNIQUE * cp.count:
                    counted.append(cp.name)
        if counted:
            other = _other(ctx, name)
            schema = other.schema()
            keys += _counted_keys(
                name,
                other,
                [
                    c
                    for c in dict.fromkeys(counted)
                    if c in schema and (schema[c].is_integer() or schema[c].is_string())
                ],
            )
    else:
        other = _other(ctx, name)
        keys = _counted_keys(name, other, [c for c, d in other.schema().items() if d.is_integer() or d.is_string()])
    return keys


def key_profile(profile: TableProfile) -> TableProfile:
    """What the reference search reads of a table's profile, and no more: its integer and text
    columns without their distributions, and the profile's degradations.  Stored beside the
    profile, it is what the other tables' searches read (a fraction of the profile's size, and
    of the time to read and parse it), and `_find_keys` finds the same keys in it."""
    slim = {
        "quantiles": None,
        "top_values": None,
        "histogram": None,
        "pattern_counts": None,
        "storage_classes": None,
        "mean": None,
        "std": None,
    }
    columns = [
        cp.model_copy(update=slim)
        for cp in profile.columns
        if (dtype := _profiled_type(cp)) is not None and (dtype.is_integer() or dtype.is_string())
    ]
    return profile.model_copy(
        update={
            "columns": columns,
            "sample_rows": [],
            "degradations": [d for d in profile.degradations if d.stage == "profile"],
        }
    )


def _profiled_type(cp: ColumnProfile) -> Optional[dt.DataType]:
    """The type a stored profile read the column as (text, when it had to be carried as text)."""
    if cp.profiled_as_text is not None:
        return dt.string
    return _parsed_type(cp.dtype)


@functools.lru_cache(maxsize=4096)
def _parsed_type(name: str) -> Optional[dt.DataType]:
    """A type's name parsed once (a data type is immutable): each table's search reads every
    other table's columns, and parsing a name costs more than the rest of the look-up."""
    try:
        return dt.dtype(name)
    except Exception:  # a type this ibis cannot parse back is no key type anyway
        return None


def _still_key(ctx: Context, key: Key) -> bool:
    """A key taken from a stored profile is still a column of that type in the table: the
    profile may be older than the table."""
    try:
        schema = _other(ctx, key.table).schema()
    except Unopened:
        return False
    if key.column not in schema:
        return False
    now = schema[key.column]
    return (now.is_string() and key.dtype.is_string()) or (now.is_integer() and key.dtype.is_integer())


def _counted_keys(name: str, other: ibis.Table, usable: list[str]) -> list[Key]:
    """The unique, non-empty columns among `usable`, counted exactly in the database."""
    if not usable:
        return []
    schema = other.schema()
    stats: dict[str, Any] = {}
    # a few columns per query: wide tables meet PostgreSQL's and SQLite's column limits
    for start in range(0, len(usable), KEY_COLUMNS_PER_QUERY):
        chunk = list(enumerate(usable[start : start + KEY_COLUMNS_PER_QUERY], start))
        stats.update(_key_stats(other, chunk))  # a table that cannot be read degrades the check
    keys = []
    for i, c in enumerate(usable):
        d, n = int(stats[f"d{i}"] or 0), int(stats[f"n{i}"] or 0)
        if n and d == n == int(stats["rows"]) and d >= MIN_DISTINCT:
            keys.append(
                Key(name, c, schema[c], d, stats[f"lo{i}"], stats[f"hi{i}"], stats.get(f"ls{i}"), stats.get(f"ll{i}"))
            )
    return keys


def _key_stats(other: ibis.Table, columns: list[tuple[int, str]]) -> dict[str, Any]:
    aggs = {"rows": other.count()}
    for i, c in columns:
        aggs[f"d{i}"] = other[c].nunique()
        aggs[f"n{i}"] = other[c].count()
        aggs[f"lo{i}"] = other[c].min()
        aggs[f"hi{i}"] = other[c].max()
        if other[c].type().is_string():  # as text: a PostgreSQL enum has no length()
            aggs[f"ls{i}"] = portable.as_text(other, c).length().min()
            aggs[f"ll{i}"] = portable.as_text(other, c).length().max()
    return one(other, **aggs)


def _digits(value: Any) -> Optional[str]:
    """A code or number as its digits without leading zeros ('01001' and 1001 -> '1001')."""
    s = str(value).strip()
    if s.isdigit():
        return s.lstrip("0") or "0"
    return None


def _own_key(ctx: Context, cp: ColumnProfile) -> bool:
    lname = cp.name.lower()
    unique = cp.distinct is not None and cp.distinct == cp.count and not cp.nulls
    return unique and (lname == "id" or lname == f"{text.singular(ctx.name).lower()}_id")


GENERIC_WORDS = {"id", "key", "code", "no", "num", "number", "nr", "ref", "fk", "pk"}


def _related(cp: ColumnProfile, key: Key) -> bool:
    """The names share a word beyond 'id': customer_id and customers.customer_id (or customers.id)."""
    mine = set(text.words(cp.name)) - GENERIC_WORDS
    theirs = (set(text.words(key.column)) | set(text.words(text.singular(key.table)))) - GENERIC_WORDS
    return bool(mine & theirs)


DENSE_FROM = 100  # a run of keys starting below this is where counts, hours and codes fall by chance


def _family(table: str) -> str:
    """The first word of a table's name: nyc_flights and nyc_airports come from one source."""
    words = text.words(table)
    return words[0] if len(words) > 1 else ""


def _decisive(ctx: Context, cp: ColumnProfile, key: Key) -> bool:
    """A key that the names point to (customer_id -> customers), or in a table of the same
    family (nyc_flights.dest -> nyc_airports.faa): its verdict stands over chance matches elsewhere."""
    return _related(cp, key) or (_family(ctx.name) != "" and _family(ctx.name) == _family(key.table))


def _dense(key: Key) -> bool:
    """A surrogate key 0..N or 1..N: any small integer column (an hour, a count) falls inside it
    by chance.  A run that starts far from zero (1000..1299) is specific enough to go by values."""
    try:
        low, high = int(key.low), int(key.high)
    except (TypeError, ValueError):
        return False
    return key.dtype.is_integer() and high - low + 1 == key.distinct and low < DENSE_FROM


def _lengths_overlap(cp: ColumnProfile, key: Key) -> bool:
    """Text values as long as some key: two-letter carriers are never five-character airport codes."""
    if (
        cp.length is None
        or cp.length.min is None
        or cp.length.max is None
        or key.shortest is None
        or key.longest is None
    ):
        return True
    return not (cp.length.max < key.shortest or cp.length.min > key.longest)


def _codes_in_range(ctx: Context, cp: ColumnProfile, key: Key) -> bool:
    """Enough of the text codes fall inside the integer keys' range to be mostly keys: a code
    outside it matches none (the verification would find it missing)."""
    values = [v for v in (ctx.values(cp) or {}) if v.strip()]
    try:
        low, high = int(key.low), int(key.high)
    except (TypeError, ValueError):
        return True
    inside = sum(1 for v in values if (d := _digits(v)) is not None and low <= int(d) <= high)
    return inside >= MIN_INCLUSION * len(values)


def _ranges_overlap(cp: ColumnProfile, key: Key) -> bool:
    try:
        return not (cp.max < key.low or cp.min > key.high)
    except TypeError:
        return True


def _candidates(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> list[tuple[Key, bool]]:
    """(key, cross_type) pairs worth verifying for column ``cp``."""
    if not (dtype.is_integer() or dtype.is_string()) or (cp.distinct or 0) < MIN_DISTINCT or _own_key(ctx, cp):
        return []
    if dtype.is_integer() and not is_identifier(cp.name):
        return []  # an integer measure (an hour, a count) matches some id range by chance
    digit_codes = False
    if dtype.is_string():
        reading = ctx.reading(cp)
        codes = [] if reading is None else [*reading.parsed_counts, *reading.unparsed]
        digit_codes = bool(codes) and all(_digits(v) is not None for v in codes)
    found = []
    for name in sorted(ctx.catalog):
        if name == ctx.name:
            continue
        try:
            keys = _keys_of(ctx, name)
        except Unopened:
            continue
        for key in keys:
            if key.distinct < 0.5 * (cp.distinct or 0):
                continue  # too few keys to hold most of this column's values
            if key.dtype.is_string() == dtype.is_string():
                if _ranges_overlap(cp, key) and _lengths_overlap(cp, key) and (_related(cp, key) or not _dense(key)):
                    found.append((key, False))
            elif (
                dtype.is_string()
                and digit_codes
                and key.dtype.is_integer()
                and key.distinct <= CROSS_TYPE_MAX_KEYS
                and (_related(cp, key) or not _dense(key))
                and _codes_in_range(ctx, cp, key)
            ):
                # a row number 1..N holds any measurement written as text ('NA' made it text)
                # by chance, as it holds any small integer
                found.append((key, True))
    # a key whose names match is tried first: its verdict (clean or orphans) stands
    return sorted(found, key=lambda kc: (not _related(cp, kc[0]), not _decisive(ctx, cp, kc[0])))


def _verify_same_type(ctx: Context, cp: ColumnProfile, key: Key) -> tuple[int, int, int, list[str]]:
    """(distinct values, distinct missing, rows missing, examples) in the database: the column's
    values with their row counts, left-joined to the distinct keys.  The values are few beside
    the rows, so no backend compares each row with the keys (MySQL's row-by-row NOT EXISTS
    took minutes on 336,776 flights)."""
    t, c = ctx.table, ctx.table[cp.name]
    target = _other(ctx, key.table)
    present = t.filter(c.notnull())
    values = present.group_by(v=present[cp.name]).aggregate(n=present.count())
    keys = target.select(k=target[key.column]).distinct()
    joined = values.left_join(keys, values.v == keys.k)
    unmatched = joined.k.isnull()
    stats = one(
        joined, values=joined.count(), missing=joined.count(where=unmatched), rows=joined.n.sum(where=unmatched)
    )
    n_values, n_missing = int(stats["values"]), int(stats["missing"] or 0)
    if n_missing == 0 or not _included(n_values, n_missing):
        return n_values, n_missing, 0, []  # clean, or no reference at all: no more queries
    rows = int(stats["rows"] or 0)
    missing = joined.filter(unmatched)
    if joined.v.type().is_string():
        # a placeholder ('NA') with no match is an unknown reference, reported as a placeholder
        # (sentinel_values): counted here too, the same rows would be two findings
        maybe = missing.filter(might_be_placeholder(missing.v)).select("v", "n").limit(MAX_PLACEHOLDERS)
        read = {str(r["v"]): int(r["n"]) for r in maybe.to_pyarrow().to_pylist()}
        stand_ins = {v: n for v, n in read.items() if text_values.is_placeholder(v, cp.name)}
        if stand_ins:
            n_values, n_missing = n_values - len(stand_ins), n_missing - len(stand_ins)
            rows -= sum(stand_ins.values())
            if n_missing == 0:
                return n_values, 0, 0, []
            missing = missing.filter(~missing.v.isin(list(stand_ins)))
    examples = [str(r["v"]) for r in missing.select("v").order_by("v").limit(5).to_pyarrow().to_pylist()]
    return n_values, n_missing, rows, examples


def _key_values(ctx: Context, key: Key) -> set[Any]:
    """The distinct values of another table's key column, pulled once per run."""
    cache_key = ("key values", f"{key.table}.{key.column}")
    if cache_key not in ctx.shared:
        target = _other(ctx, key.table)
        pulled = target.select(k=target[key.column]).distinct().to_pyarrow().column("k").to_pylist()
        ctx.shared[cache_key] = set(pulled)
    return ctx.shared[cache_key]


def _too_little_overlap(ctx: Context, cp: ColumnProfile, key: Key, candidates: list[Key]) -> bool:
    """The cheap prune before the exact check: a text column whose values the other detectors
    already read on the host, against a text key few enough to pull once.  A text column
    meets every text key whose range it overlaps, so without it each pair cost a query."""
    if not _pullable(ctx, cp, key):
        return False
    values = ctx.values(cp) or {}
    if len(values) < MIN_DISTINCT or key in _sampled_misses(ctx, cp, candidates):
        return True
    keys = _key_values(ctx, key)
    found = sum(1 for v in values if v in keys)
    return found < MIN_INCLUSION * len(values)


def _pullable(ctx: Context, cp: ColumnProfile, key: Key) -> bool:
    return key.dtype.is_string() and key.distinct <= CROSS_TYPE_MAX_KEYS and ctx.values(cp) is not None


SAMPLED_VALUES = 32  # if 80% of the values were keys, none of 32 of them is: a chance of 0.2**32, 4e-23
PULLED_WITHOUT_SAMPLE = 10_000  # a lone candidate key this small is pulled and counted at once


def _sampled_misses(ctx: Context, cp: ColumnProfile, candidates: list[Key]) -> set[Key]:
    """The text keys among `candidates` that not one of a sample of the column's values is in.
    Before pulling tens of thousands of keys to count them (hash keys of unrelated tables meet
    on range and length), one query looks up 32 values in each of them.  The sample is the
    values of smallest CRC-32, the same on every run and blind to whether a value is a key.  The
    database's equality is never stricter than Python's (a MySQL collation ignores case), so a
    value it finds in no key is in none here either."""
    if ("sampled misses", cp.name) not in ctx.cache:
        values = ctx.values(cp) or {}
        sample = heapq.nsmallest(SAMPLED_VALUES, values, key=lambda v: (zlib.crc32(v.encode("utf-8", "replace")), v))
        # a few values, or keys already pulled: the exact count costs no more
        keys = (
            []
            if len(values) <= SAMPLED_VALUES
            else list(
                dict.fromkeys(
                    k
                    for k in candidates
                    if _pullable(ctx, cp, k)
                    and _still_key(ctx, k)
                    and ("key values", f"{k.table}.{k.column}") not in ctx.shared
                )
            )
        )
        if len(keys) == 1 and keys[0].distinct <= PULLED_WITHOUT_SAMPLE:
            keys = []  # one key of a few thousand: pulling it is one query too, and a hit would pull it
        found: dict[int, int] = {}
        for start in range(0, len(keys), KEY_COLUMNS_PER_QUERY):
            # every key column under one name, and the sample looked up once: the sample's
            # literals written once per query, not once per key (most of the query's cost
            # was ibis building and compiling them)
            parts = []
            for i, k in enumerate(keys[start : start + KEY_COLUMNS_PER_QUERY], start):
                target = _other(ctx, k.table)
                column = target[k.column]
                parts.append(
                    target.select(
                        i=ibis.literal(i, type="int32"),  # one type in every branch
                        k=column if column.type() == dt.string else column.cast(dt.string),
                    )
                )
            keyed = ibis.union(*parts, distinct=False)
            hits = keyed.filter(keyed.k.isin(sample))
            counted = hits.group_by("i").aggregate(n=hits.count())
            found.update((r["i"], int(r["n"] or 0)) for r in counted.to_pyarrow().to_pylist())
        ctx.cache[("sampled misses", cp.name)] = {k for i, k in enumerate(keys) if not found.get(i)}
    return ctx.cache[("sampled misses", cp.name)]


def _excluded_together(ctx: Context, cp: ColumnProfile, candidates: list[Key]) -> set[Key]:
    """The keys among `candidates` that the exact check would find too few of the column's
    values in, counted for all of them in one query.  Only the keys that cannot be pulled to
    the host (integer keys, or a column with too many values to read there): the others are
    counted on the host already.  Each key's count is the verification's own (the column's
    distinct values joined to the key's distinct values, with the database's equality), so a
    key left out here is one the verification would reject; with two keys or more, one query
    replaces one per key (unrelated hash keys of large tables each took a scan of the column).
    A query that fails leaves every key to its own verification."""
    cache_key = ("excluded together", cp.name)
    if cache_key not in ctx.cache:
        keys = list(dict.fromkeys(k for k in candidates if not _pullable(ctx, cp, k) and _still_key(ctx, k)))
        excluded: set[Key] = set()
        if len(keys) >= 2:
            try:
                excluded = _too_few_matched(ctx, cp, keys)
            except Exception:  # each key is verified alone, as without this count
                excluded = set()
        ctx.cache[cache_key] = excluded
    return ctx.cache[cache_key]


def _too_few_matched(ctx: Context, cp: ColumnProfile, keys: list[Key]) -> set[Key]:
    t, c = ctx.table, ctx.table[cp.name]
    present = t.filter(c.notnull())
    values = present.select(v=present[cp.name]).distinct()
    matched: dict[int, int] = {}
    n_values = 0
    for start in range(0, len(keys), KEY_COLUMNS_PER_QUERY):
        # every branch (i, n), one type in each: the values, then the values found in key i
        parts = [values.aggregate(i=ibis.literal(-1, type="int32"), n=values.count())]
        for i, k in enumerate(keys[start : start + KEY_COLUMNS_PER_QUERY], start):
            target = _other(ctx, k.table)
            found = target.select(k=target[k.column]).distinct()
            joined = values.inner_join(found, values.v == found.k)
            parts.append(joined.aggregate(i=ibis.literal(i, type="int32"), n=joined.count()))
        rows = ibis.union(*parts, distinct=False).to_pyarrow().to_pylist()
        n_values = next(int(r["n"] or 0) for r in rows if r["i"] == -1)
        matched.update((r["i"], int(r["n"] or 0)) for r in rows if r["i"] != -1)
    return {k for i, k in enumerate(keys) if not _included(n_values, n_values - matched.get(i, 0))}


def _verify_digits(ctx: Context, cp: ColumnProfile, key: Key) -> tuple[int, int, int, list[str]]:
    """The same, for text codes against integer keys, matched on their digits on the host."""
    keys = {_digits(v) for v in _key_values(ctx, key)}
    # blanks and placeholders ('NA') are unknown references, not orphans (sentinel_values reports them)
    values = {
        v: n for v, n in (ctx.values(cp) or {}).items() if v.strip() and not text_values.is_placeholder(v, cp.name)
    }
    missing = {v: n for v, n in values.items() if _digits(v) not in keys}
    distinct = len(values)
    return distinct, len(missing), sum(missing.values()), sorted(missing)[:5]


def _included(n_values: int, n_missing: int) -> bool:
    """Enough distinct values, and most of them among the keys: a reference."""
    return n_values >= MIN_DISTINCT and (n_values - n_missing) >= MIN_INCLUSION * n_values


def orphan_references(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not cp.count:
        return None
    best = None
    candidates = _candidates(ctx, cp, dtype)
    same_type = [key for key, cross in candidates if not cross]
    for key, cross in candidates:
        if not _still_key(ctx, key) or (
            not cross
            and (_too_little_overlap(ctx, cp, key, same_type) or key in _excluded_together(ctx, cp, same_type))
        ):
            continue
        n_values, n_missing, rows, examples = (_verify_digits if cross else _verify_same_type)(ctx, cp, key)
        if not _included(n_values, n_missing):
            continue  # too little overlap: not a reference
        if n_missing == 0:
            return None  # a clean reference
        if best is None or n_missing < best[2]:
            best = (key, cross, n_missing, n_values, rows, examples)
        if _decisive(ctx, cp, key):
            break  # the key its names or its family point to decides
    if best is None:
        return None
    key, cross, n_missing, n_values, rows, examples = best
    frac = rows / ctx.rows
    target = f"{key.table}.{key.column}"
    return issue(
        ctx,
        "orphan_references",
        cp.name,
        severity="high" if frac > 0.05 else "medium",
        category="smart_fixes",
        affectedRows=rows,
        description=f"{count(rows, 'row')} ({pct(rows, ctx.rows)}) of {ctx.name} "
        f"{verb_for(rows, 'has')} a {cp.name} with no match in {target}, which holds "
        f"{pct(n_values - n_missing, n_values)} of its values "
        f"({count(n_missing, 'distinct value')} missing"
        + (", matched on their digits: text codes against numbers" if cross else "")
        + ").",
        suggestedAction=f"Restore the missing {key.table} rows or correct {cp.name} on those rows; then "
        f"enforce a foreign key from {cp.name} to {target}" + (" after giving both the same type." if cross else "."),
        details={
            "references": target,
            "target_table": key.table,
            "target_column": key.column,
            "match": "digits" if cross else "equal",
            "rows": rows,
            "fraction": frac,
            "distinct_values": n_values,
            "missing_values": n_missing,
            "examples": examples,
        },
    )

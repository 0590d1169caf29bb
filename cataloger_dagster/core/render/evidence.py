"""An issue's evidence (its details) as a reader reads it: sentences and small tables.

Each kind of evidence has a renderer: counts with their share of the rows, values with their
counts, a rule with its support and exceptions, a column's measures before and after a drift.
Any other details go through the generic renderer: a flat mapping is a two-column table (the key
in words, the value formatted), a list of records is a small table.  The renderers return plain
strings in blocks; the template escapes them, so values from the data stay text.

A block is ``{"kind": "text", "text": str}`` or ``{"kind": "table", "caption": str | None,
"headers": [str], "rows": [[str]]}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

from cataloger_dagster.core.grammar import count_noun, listing, verb_for
from cataloger_dagster.core.render.charts import fmt_value

__all__ = ["evidence_blocks", "details_blocks", "raw_json", "humanise"]

# keys a page draws elsewhere (the chart) or that say nothing to a reader
HIDDEN = {"chart"}
# keys whose whole number counts rows: shown with its share of the table
ROW_COUNT_KEYS = {
    "rows",
    "exceptions",
    "count",
    "affected",
    "nulls",
    "missing",
    "blanks",
    "violations",
    "duplicates",
    "matches",
}
WORDS = {"psi": "PSI", "id": "ID", "ids": "IDs", "sql": "SQL", "nan": "NaN", "pct": "%", "n": "number"}
# keys whose number is a share (0 to 1): shown as a percentage
SHARE_KEYS = {"fraction", "support", "share", "rate", "null_fraction", "null_rate", "distinct_ratio"}
LIMIT = 200  # characters of one value shown in a cell; the raw JSON keeps all of it


def humanise(key: Any) -> str:
    """``null_rate`` -> ``Null rate``, ``by_rule`` -> ``By rule``: a details key as words."""
    words = [WORDS.get(w.lower(), w) for w in str(key).replace("_", " ").replace("-", " ").split()]
    text = " ".join(words) or str(key)
    return text[:1].upper() + text[1:]


def _value(value: Any) -> str:
    return fmt_value(value, LIMIT)


def _share(n: Any, total: int | None) -> str:
    if not _is_count(n) or not total:
        return ""
    return f"{n / total:.1%}"


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple))


def _text(text: str) -> dict:
    return {"kind": "text", "text": text}


def _table(headers: list[str], rows: list[list[str]], caption: str | None = None) -> dict:
    return {"kind": "table", "caption": caption, "headers": headers, "rows": rows}


def _counted(value: Any, total: int | None) -> str:
    share = _share(value, total) if value != total else ""  # "1,000 (100.0% of rows)" says nothing
    return f"{fmt_value(value)} ({share} of rows)" if share else _value(value)


def _scalar(key: str, value: Any, total: int | None) -> str:
    if key in ROW_COUNT_KEYS or key.endswith("_rows"):
        return _counted(value, total)
    if key in SHARE_KEYS and isinstance(value, float) and 0.0 <= value <= 1.0:
        return _percent(value)
    return _value(value)


# ------------------------------------------------------------------ the shapes any details may hold


def _counts_table(key: str, counts: Mapping[Any, Any], total: int | None) -> dict:
    """Values (or causes) with how many rows each: counts with percentages."""
    rows = [
        [_value(k), fmt_value(n), _share(n, total) or "—"] for k, n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]
    return _table(["Value", "Rows", "Share of rows"], rows, humanise(key))


def _grouped_counts_table(key: str, groups: Mapping[Any, Mapping[Any, Any]], total: int | None) -> dict:
    """Groups of values with their counts ({"shipped": {"shipped": 900, "Shipped": 9}})."""
    rows = [
        [_value(group), _value(value), fmt_value(n), _share(n, total) or "—"]
        for group, counts in groups.items()
        for value, n in counts.items()
    ]
    return _table(["Group", "Value", "Rows", "Share of rows"], rows, humanise(key))


def _records_table(key: str, records: list[Mapping[str, Any]]) -> dict:
    """A list of records (example rows, runs): one row each, a column per key."""
    keys = list(dict.fromkeys(k for r in records for k in r))
    return _table([str(k) for k in keys], [[_cell(r.get(k)) for k in keys] for r in records], humanise(key))


def _cell(value: Any) -> str:
    if _is_scalar(value):
        return _value(value)
    if isinstance(value, Mapping):  # its keys may be data (column names, values): shown as they are
        return "; ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return ", ".join(_cell(v) for v in value)


def _is_counts(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(_is_count(n) for n in value.values())


def _is_grouped_counts(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(_is_counts(v) for v in value.values())


def _is_records(value: Any) -> TypeGuard[Sequence[Mapping[str, Any]]]:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _is_value_counts(value: Any) -> bool:
    return _is_records(value) and all(set(v) >= {"value", "count"} for v in value)


def details_blocks(details: Mapping[str, Any], total: int | None = None) -> list[dict]:
    """The generic renderer: the flat part of ``details`` as one two-column table, each nested
    part as a small table of its own (or a sentence for a short list of values)."""
    flat, blocks = [], []
    for key, value in details.items():
        if key in HIDDEN or value in (None, [], {}, ""):
            continue
        if _is_scalar(value):
            flat.append([humanise(key), _scalar(key, value, total)])
        elif _is_value_counts(value):
            blocks.append(_counts_table(key, {v["value"]: v["count"] for v in value}, total))
        elif _is_counts(value):
            blocks.append(_counts_table(key, value, total))
        elif _is_grouped_counts(value):
            blocks.append(_grouped_counts_table(key, value, total))
        elif _is_records(value):
            blocks.append(_records_table(key, list(value)))
        elif isinstance(value, Mapping):
            blocks.append(_table(["", ""], [[str(k), _cell(v)] for k, v in value.items()], humanise(key)))
        else:
            flat.append([humanise(key), ", ".join(_cell(v) for v in value)])
    return ([_table(["", ""], flat)] if flat else []) + blocks


# ------------------------------------------------------------------ evidence of its own shape


def _rule_blocks(details: Mapping[str, Any], total: int | None) -> list[dict]:
    """A rule between columns: where it holds, its exceptions and a few of them."""
    rule = details.get("rule") or details.get("formula") or "the rule"
    exceptions = details.get("exceptions")
    holds, applies = details.get("holds"), details.get("applies")
    blocks = []
    if _is_count(holds) and _is_count(applies) and applies:
        blocks.append(
            _text(
                f"The rule {rule} holds on {holds:,} of {count_noun(applies, 'row', zero=None)} "
                f"({holds / applies:.1%} support)."
            )
        )
    else:
        blocks.append(_text(f"The rule: {rule}."))
    if _is_count(exceptions):
        blocks.append(
            _text(
                f"{count_noun(exceptions, 'row', zero=None)} {verb_for(exceptions, 'breaks')} it"
                + (f" ({exceptions / total:.1%} of the table)." if total else ".")
            )
        )
    column, when, both = details.get("column"), details.get("when_column"), details.get("rows")
    if details.get("kind") == "not_null_when" and column and when and _is_count(both) and _is_count(exceptions):
        blocks.append(
            _text(
                f"{column} is NULL on {count_noun(both + exceptions, 'row', zero=None)}: {both:,} where "
                f"{when} is NULL too, {exceptions:,} where {when} has a value."
            )
        )
    examples = details.get("examples") or details.get("when_examples")
    if _is_records(examples):
        blocks.append(_records_table("examples of rows that break it", list(examples)))
    elif examples:
        lead = f"Values of {when} on rows that break it: " if when else "Examples: "
        blocks.append(_text(lead + listing(_value(v) for v in examples) + "."))
    if details.get("same_rows"):
        blocks.append(_text(f"The same rows break {listing(details['same_rows'])}."))
    return blocks


def _percent(value: Any) -> str:
    return f"{value:.1%}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _drift_blocks(details: Mapping[str, Any], total: int | None) -> list[dict]:
    """A column's measures in the previous run and in this one, with the range expected of them."""
    series = (details.get("chart") or {}).get("series") or {}
    rows = []
    for key, label in (("null_rate", "null rate"), ("distinct_ratio", "distinct ratio")):
        measure = details.get(key)
        if not isinstance(measure, Mapping):
            continue
        past = [v for v in (series.get(label) or [])[:-1] if v is not None]
        band = measure.get("band") or {}
        expected = (
            f"{_percent(max(band['low'], 0.0))} to {_percent(min(band['high'], 1.0))}"
            if isinstance(band.get("low"), (int, float)) and isinstance(band.get("high"), (int, float))
            else "—"
        )
        rows.append([humanise(label), _percent(past[-1]) if past else "—", _percent(measure.get("value")), expected])
    blocks = []
    psi = details.get("psi")
    if isinstance(psi, Mapping):
        blocks.append(
            _text(
                f"Its distribution moved: a PSI of {fmt_value(psi.get('value'))}, over the "
                f"{fmt_value(psi.get('threshold'))} allowed for a {psi.get('kind', 'column')} column, "
                f"computed on its {psi.get('on', 'values')}."
            )
        )
    if rows:
        blocks.append(_table(["Measure", "Previous run", "This run", "Expected"], rows, "Before and after"))
    if details.get("previous_run"):
        blocks.append(_text(f"Compared with the run of {_value(details['previous_run'])}."))
    rest = {k: v for k, v in details.items() if k not in ("psi", "null_rate", "distinct_ratio", "previous_run")}
    return blocks + details_blocks(rest, total)


RENDERERS: dict[str, Callable[[Mapping[str, Any], int | None], list[dict]]] = {
    "rule_violations": _rule_blocks,
    "distribution_drift": _drift_blocks,
}


def evidence_blocks(issue_type: str, details: Mapping[str, Any] | None, total: int | None = None) -> list[dict]:
    """The blocks showing an issue's ``details``: its type's renderer, else the generic one;
    ``total`` is the table's row count, that counts are shown as a share of."""
    if not details:
        return []
    renderer = RENDERERS.get(issue_type, details_blocks)
    try:
        return renderer(details, total)
    except (KeyError, TypeError, ValueError, AttributeError):
        # details of an older or unexpected shape still show, through the generic renderer
        return details_blocks(details, total)


def raw_json(details: Any) -> str:
    """The details as indented JSON, for the reader who wants every number."""
    return json.dumps(details, indent=2, default=str, ensure_ascii=False)

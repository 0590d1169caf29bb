"""Labels and formats: one category written several ways, and values that break a known format."""

from __future__ import annotations

from typing import Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core import text
from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues import categories
from cataloger_dagster.core.issues.detectors.context import Context, count, free_text_counts, is_quoted, issue, one, pct
from cataloger_dagster.core.issues.text_values import is_placeholder
from cataloger_dagster.core.models import ColumnProfile, IssueModel

CATEGORY_MAX_DISTINCT = 200
FORMATS = {
    "email": r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$",
    "url": r"^https?://[^\s/$.?#][^\s]*$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "phone": r"^\+?[0-9][0-9 ().\-]{5,18}[0-9]$",
}
FORMAT_SHARE = 0.8  # share that must match a format before the rest count as invalid


def _labels(ctx: Context, cp: ColumnProfile) -> Optional[dict[str, int]]:
    reading = ctx.reading(cp)
    if reading is None or reading.kind:
        return None  # free text, or numbers / dates: never category variants
    values = ctx.values(cp) or {}
    # spaces at the ends are whitespace_values' finding: 'shipped ' counts as 'shipped' here
    return categories.merge_spacing({v: n for v, n in values.items() if v.strip() and not is_placeholder(v, cp.name)})


# letter codes among words: the words cover this share of the rows at least, the codes this share at most
WORD_SHARE = 0.9
CODE_MAX_SHARE = 0.05
MIN_WORDS = 3


def letter_codes(labels: dict[str, int]) -> dict[str, int]:
    """Single letters among a category's words ('C' and 'B' beside None / Minor / Medium /
    Substantial): a second coding scheme, whose rows group apart from the words they stand for.
    Only where words are the column's scheme (three or more, nearly every row) and the letters
    are rare; a column of codes (S / M / L) or of words and codes in equal use is a scheme of its own."""
    total = sum(labels.values())
    words = {v: n for v, n in labels.items() if len(v.strip()) >= 3 and any(ch.isalpha() for ch in v)}
    codes = {v: n for v, n in labels.items() if len(v.strip()) == 1 and v.strip().isalpha()}
    if not total or not codes or len(words) < MIN_WORDS or sum(words.values()) < WORD_SHARE * total:
        return {}
    if sum(codes.values()) > CODE_MAX_SHARE * total:
        return {}
    return dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))


def inconsistent_categories(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or cp.count < 20:
        return None
    labels = _labels(ctx, cp)
    if not labels:
        return None
    is_category = len(labels) <= CATEGORY_MAX_DISTINCT and len(labels) <= 0.5 * cp.count
    variants = categories.group_variants(labels) if is_category else categories.Variants()
    if not variants:
        variants = categories.first_word_variants(labels)
    codes = categories.code_case_variants(labels)
    if codes and not variants:
        variants = codes
    elif codes and variants.part == "value":
        known = {v for g in variants.groups.values() for v in g}
        for canon, group in codes.groups.items():
            if not set(group) & known:
                variants.groups[canon], variants.why[canon] = group, codes.why[canon]
    cased = categories.case_inside_labels(labels) if is_category and len(labels) <= 100 else {}
    lettered = letter_codes(labels) if is_category else {}
    if not variants and not cased and not lettered:
        return None
    facts, rows = [], 0
    if variants:
        rows = variants.rows
        groups = "; ".join(" / ".join(repr(v) for v in g) for g in variants.groups.values())
        where = "" if variants.part == "value" else f" in its {variants.part}"
        n = len(variants.groups)
        facts.append(
            f"{cp.name} writes {count(n, 'value')} in several ways{where} ({groups}); "
            f"{count(rows, 'row')} {verb_for(rows, 'uses')} a rarer spelling"
        )
    if cased:
        shown = "; ".join(" / ".join(repr(f) for f in spellings) for spellings in cased.values())
        minority = {
            label
            for spellings in cased.values()
            for label in min(spellings.values(), key=lambda ls: sum(labels[x] for x in ls))
        }
        cased_rows = sum(labels[x] for x in minority)
        rows = max(rows, cased_rows)
        facts.append(
            f"{cp.name} capitalises the same word differently inside its labels ({shown}), "
            f"on {count(cased_rows, 'row')}"
        )
    if lettered:
        coded_rows = sum(lettered.values())
        rows = max(rows, coded_rows)
        words = sorted((v for v in labels if len(v.strip()) >= 3), key=lambda v: -labels[v])[:4]
        facts.append(
            f"{cp.name} writes {count(coded_rows, 'row')} as single letters "
            f"({', '.join(f'{v!r} ({n:,})' for v, n in lettered.items())}) among words "
            f"({', '.join(repr(w) for w in words)}): another coding scheme"
        )
    canons = list(variants.groups) if variants else []
    return issue(
        ctx,
        "inconsistent_categories",
        cp.name,
        severity="medium",
        category="quick_fixes",
        affectedRows=rows,
        description="; ".join(facts) + ".",
        suggestedAction=(
            f"Map each spelling of {cp.name} to one canonical value"
            + (f" ({', '.join(repr(k) for k in canons[:5])})" if canons else "")
            + " and validate new values against a reference list."
        ),
        details={
            "groups": variants.groups,
            "rules": variants.why,
            "part": variants.part,
            "case_variants": cased,
            **({"letter_codes": lettered, "examples": list(lettered)} if lettered else {}),
            "rows": rows,
        },
    )


def _format_of(cp: ColumnProfile) -> Optional[str]:
    if cp.semantic_type in FORMATS:
        return cp.semantic_type
    hinted = [f for f in FORMATS if f in text.words(cp.name)]
    return hinted[0] if hinted else None


QUOTED_SHARE = 0.5


def _quoted(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    """Text wrapped in literal double quotes ('"Avatar"'): a load that kept the JSON or CSV quoting."""
    values = ctx.values(cp) if dtype.is_string() else None
    if values is not None:  # the value counts are at hand: no scan
        quoted_values = [v for v in values if len(v) >= 2 and v.startswith('"') and v.endswith('"')]
        n, quoted = sum(values.values()), sum(values[v] for v in quoted_values)
        examples = sorted(quoted_values)[:3]  # the same on every backend, whatever its order
        if not n or quoted < QUOTED_SHARE * n:
            return None
        return _quoted_issue(ctx, cp, dtype, n, quoted, examples)
    s = ctx.table[cp.name].cast("string")
    present = ctx.table.filter(s.notnull())
    q = present[cp.name].cast("string")
    if dtype.is_string():  # the scan the placeholder check shares
        stats = free_text_counts(ctx, cp)
        n, quoted = stats["values"], stats["quoted"]
    else:
        stats = one(present, n=present.count(), quoted=is_quoted(q).sum())
        n, quoted = int(stats["n"] or 0), int(stats["quoted"] or 0)
    if not n or quoted < QUOTED_SHARE * n:
        return None
    examples = [
        r["v"]
        for r in present.filter(is_quoted(q)).select(v=q).distinct().order_by("v").limit(3).to_pyarrow().to_pylist()
    ]
    return _quoted_issue(ctx, cp, dtype, n, quoted, examples)


def _quoted_issue(
    ctx: Context, cp: ColumnProfile, dtype: dt.DataType, n: int, quoted: int, examples: list[str]
) -> IssueModel:
    return issue(
        ctx,
        "invalid_format",
        cp.name,
        severity="medium",
        category="quick_fixes",
        affectedRows=quoted,
        description=f"{pct(quoted, n)} of {cp.name}'s values ({count(quoted, 'row')}) carry literal double quotes "
        f"({', '.join(examples)}), kept from the file they were loaded from"
        + (f"; the column is typed {dtype}" if dtype.is_json() else "")
        + ".",
        suggestedAction=f"Reload {cp.name} as text without its quotes (or strip them: trim(both '\"' from ...)), "
        "so that searches and joins on it match.",
        details={
            "format": "unquoted text",
            "quoted": quoted,
            "values": n,
            "fraction": quoted / n,
            "examples": examples,
        },
    )


def invalid_format(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if (dtype.is_string() or dtype.is_json()) and cp.count:
        quoted = _quoted(ctx, cp, dtype)
        if quoted is not None:
            return quoted
    if not dtype.is_string() or not cp.count:
        return None
    fmt = _format_of(cp)
    if fmt is None:
        return None
    pats = cp.pattern_counts or {}
    if pats.get(fmt, -1) >= cp.count:
        return None  # the profile saw every value match: save a scan
    c = ctx.table[cp.name]
    u = ctx.table.filter(c.notnull() & (c.strip() != ""))
    ok = u[cp.name].strip().re_search(FORMATS[fmt])
    stats = one(u, usable=u.count(), valid=ok.sum())
    usable, valid = int(stats["usable"]), int(stats["valid"] or 0)
    bad_values = u.filter(~ok).select(v=u[cp.name]).distinct().order_by("v")
    bad_list = [r["v"] for r in bad_values.limit(50).to_pyarrow().to_pylist()]
    placeholders = [v for v in bad_list if is_placeholder(v, cp.name)]
    examples = [v for v in bad_list if v not in placeholders][:5]
    bad = usable - valid
    if placeholders:
        c2 = u[cp.name]
        bad -= int(u.filter(c2.isin(placeholders)).count().execute())
    if not usable or bad <= 0 or valid < FORMAT_SHARE * usable:
        return None
    frac = bad / usable
    return issue(
        ctx,
        "invalid_format",
        cp.name,
        severity="medium" if frac >= 0.05 else "low",
        category="quick_fixes",
        affectedRows=bad,
        description=f"{count(bad, 'value')} of {cp.name} ({pct(bad, usable)}) "
        f"{verb_for(bad, 'is')} not valid {fmt} values, e.g. "
        f"{', '.join(repr(e) for e in examples[:3])}.",
        suggestedAction=f"Validate {cp.name} as {fmt} at entry; correct the malformed values "
        "from the source or set them to NULL.",
        details={
            "format": fmt,
            "pattern": FORMATS[fmt],
            "usable": usable,
            "invalid": bad,
            "fraction": frac,
            "examples": examples,
        },
    )

"""The check of inconsistent categories issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import (
    as_date,
    as_number,
    count,
    outcome,
    value_counts,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, t


# --- the block sent to the sandbox starts here ---
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
        return outcome(
            hypothesis,
            "confirmed" if split else "refuted",
            f"{', '.join(f'{w!r} as ' + ' and '.join(map(repr, f)) for w, f in split.items())} in "
            "the labels of one column"
            if split
            else "one writing of each word",
            rows,
            forms=forms,
            rows_with_variant=rows,
            percent=pct(rows, ROWS),
        )
    alone = {canon: g for canon, g in groups.items() if canon not in g}
    if alone and len(alone) == len(groups):
        return odd_case_codes(column, alone)
    variants = sorted({v for g in groups.values() for v in g})
    value = t[column].re_extract(r"^(\S+)", 1) if part == "first word" else t[column]
    counts = dict(value_counts(value, where=value.isin(variants)))
    spellings = {canon: {v: counts[v] for v in g if v in counts} for canon, g in groups.items()}
    split = {canon: s for canon, s in spellings.items() if len(s) > 1}
    # numbers and dates one edit apart are different values, never spellings
    words = {canon: s for canon, s in split.items() if not all(as_number(v) is not None or as_date(v) for v in s)}
    rows = sum(n for canon, s in words.items() for v, n in s.items() if v != max(s, key=s.get))
    evidence = dict(
        spellings=split,
        rows_with_variant=rows,
        percent=pct(rows, ROWS),
        numbers_or_dates=sorted(set(split) - set(words)),
    )
    if not split:
        return outcome(hypothesis, "refuted", "the table holds no more than one spelling of each", 0, **evidence)
    if not words:
        return outcome(
            hypothesis,
            "refuted",
            "the values are numbers or dates, which differ in value, not in spelling",
            0,
            **evidence,
        )
    # the rows of a variant share what the rows of its main spelling say: the same case-folded
    # label, the same rest of the label after the first word, or the same specific value elsewhere
    support = {}
    rest = t[column].re_extract(r"^\S+\s+(.*)$", 1) if part == "first word" else None
    others = [c for c in t.columns if c != column and t.schema()[c].is_string()][:10]
    for s in words.values():
        main = max(s, key=s.get)
        for variant in s:
            if variant == main:
                continue
            if " ".join(variant.lower().replace("-", " ").split()) == " ".join(main.lower().replace("-", " ").split()):
                support[variant] = "the same label in other letter case or punctuation"
                continue
            for name, expr in ([("rest of the label", rest)] if rest is not None else []) + [(c, t[c]) for c in others]:
                mine = t.filter(value == variant).select(x=expr).distinct()
                theirs = t.filter(value == main).select(y=expr).distinct()
                both = mine.join(theirs, mine.x == theirs.y).select("x")
                # specific: a value that goes with three categories at most (same model, same maker)
                spread = (
                    t.select(x=expr, c=value)
                    .distinct()
                    .join(both, "x")
                    .group_by("x")
                    .aggregate(k=lambda g: g.count())
                    .filter(lambda g: g.k <= 3)
                )
                shared = [r["x"] for r in spread.limit(3).to_pyarrow().to_pylist() if r["x"] not in (None, "")]
                if shared:
                    support[variant] = f"its rows share {name} {shared[0]!r} with rows of {main!r}"
                    break
    evidence["shared"] = support
    # a variant whose rows belong elsewhere: where nearly all rows of the main spelling share one
    # value of a grouping column, the variant's rows never hold it (another place, another kind)
    apart = {}
    groupings = None
    for s in words.values():
        main = max(s, key=s.get)
        for variant in s:
            if variant == main or variant in support or s[main] < 5:
                continue
            if groupings is None:
                groupings = [c for c in others if 2 <= int(t[c].nunique().execute()) <= 30][:5]
            for c in groupings:
                theirs = value_counts(t[c], where=value == main)
                if not theirs or theirs[0][1] < 0.9 * s[main]:
                    continue
                mine = dict(value_counts(t[c], where=value == variant))
                if mine and theirs[0][0] not in mine:
                    apart[variant] = (
                        f"{c} is {theirs[0][0]!r} on {theirs[0][1]} of the {s[main]} rows of {main!r}, "
                        f"never on the rows of {variant!r} ({', '.join(map(repr, list(mine)[:2]))})"
                    )
                    break
    evidence["apart"] = apart
    unsupported = [v for canon, s in words.items() for v in s if v != max(s, key=s.get) and v not in support]
    if apart and not support and all(v in apart for v in unsupported):
        first = next(iter(apart.items()))
        return outcome(
            hypothesis,
            "refuted",
            f"the rarer values are other things, not other spellings ({first[0]!r}: {first[1]})",
            0,
            **evidence,
        )
    if support:
        first = next(iter(support.items()))
        return outcome(
            hypothesis,
            "confirmed",
            f"{len(support)} variants share what their rows say with the main spelling ({first[0]!r}: {first[1]})",
            rows,
            **evidence,
        )
    return outcome(
        hypothesis,
        "inconclusive",
        "the values are close in spelling, but nothing else in their rows ties them to the main spelling",
        rows,
        **evidence,
    )


def odd_case_codes(column, groups):
    """Codes written in another case than the column's other codes, with or without a twin."""
    hypothesis = f"{column} writes its codes in one letter case, and the odd ones are the same codes"
    upper = all(canon == canon.upper() for canon in groups)
    c = t[column]
    usual = (c == c.upper()) if upper else (c == c.lower())
    stats = t.filter(c.notnull()).aggregate(n=lambda g: g.count(), usual=usual.ifelse(1, 0).sum())
    stats = stats.to_pyarrow().to_pylist()[0]
    n, same = int(stats["n"] or 0), int(stats["usual"] or 0)
    odd = sorted({v for g in groups.values() for v in g})
    found = dict(value_counts(c, where=c.isin(odd)))
    rows = sum(found.values())
    evidence = dict(
        spellings=found,
        rows_with_variant=rows,
        percent=pct(rows, ROWS),
        usual_case="upper" if upper else "lower",
        usual_share=pct(same, n),
    )
    if not rows:
        return outcome(hypothesis, "refuted", "no code of the column is written in another case", 0, **evidence)
    if same < 0.95 * n:
        return outcome(
            hypothesis,
            "refuted",
            f"only {pct(same, n):g}% of the codes are in {evidence['usual_case']} "
            "case: the column has no one case the others break",
            0,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(rows, 'row')} ({', '.join(map(repr, list(found)[:3]))}) break the "
        f"{evidence['usual_case']} case of {pct(same, n):g}% of the column's values",
        rows,
        **evidence,
    )

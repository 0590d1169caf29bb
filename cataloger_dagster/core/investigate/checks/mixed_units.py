"""The check of mixed_units issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import as_number, count, outcome, share, value_counts

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import t


# --- the block sent to the sandbox starts here ---
def check_mixed_units(column, spellings, placeholders):
    import re

    hypothesis = f"{column} writes one quantity in several units or notations"
    if not t.schema()[column].is_string():
        return outcome(hypothesis, "refuted", f"{column} is no longer text", 0)
    number = r"\d+(?:[.,]\d+)?"
    compound = {
        "ft+in": re.compile(rf"{number}\s*(?:'|ft\.?|feet|foot)\s*{number}\s*(?:\"|''|in\.?|inch|inches)?"),
        "h+min": re.compile(rf"{number}\s*(?:h|hr|hrs|hours?)\s*{number}\s*(?:m|min|mins|minutes?)?"),
    }
    with_unit = re.compile(rf"({number})\s*([a-z]+|\"|'|'')\.?")
    notations, other = {}, 0
    for v, n in value_counts(t[column]):
        text = " ".join(str(v).strip().lower().split())
        if not text or text in placeholders:
            continue
        m = with_unit.fullmatch(text)
        kind = next((k for k, p in compound.items() if p.fullmatch(text)), None)
        if kind is None and m and m[2] in spellings:
            kind = spellings[m[2]]
        if kind is None and as_number(text) is not None:
            kind = "number without unit"
        if kind is None:
            other += n
            continue
        notations.setdefault(kind, [0, []])
        notations[kind][0] += n
        if len(notations[kind][1]) < 3:
            notations[kind][1].append(v)
    read = sum(n for n, _ in notations.values())
    evidence = dict(
        notations={k: {"rows": n, "examples": e} for k, (n, e) in notations.items()}, rows_read=read, other_text=other
    )
    with_units = [k for k in notations if k != "number without unit"]
    if not read or not with_units:
        return outcome(hypothesis, "refuted", "no value carries a unit", 0, **evidence)
    top = max(n for n, _ in notations.values())
    if len(notations) < 2 or top >= 0.99 * read:
        return outcome(
            hypothesis,
            "refuted",
            f"one notation covers {share(top, read)} of the values: the column's notation, the rest being typos",
            read - top,
            **evidence,
        )
    if other > read:
        return outcome(
            hypothesis, "inconclusive", f"most values ({count(other, 'row')}) are other text", read, **evidence
        )
    main = max(notations, key=lambda k: notations[k][0])
    return outcome(
        hypothesis,
        "confirmed",
        f"{len(notations)} notations share the column: {count(read - top, 'value')} "
        f"are not written as the main one ({main})",
        read - top,
        **evidence,
    )

"""The check of whitespace values issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome, value_counts

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, t


# --- the block sent to the sandbox starts here ---
def check_whitespace_values(column):
    hypothesis = f"values of {column} carry stray spaces that a trim would remove"
    c = t[column]
    present = t.filter(c.notnull() & (c.strip() != ""))
    s = present[column]
    candidates = value_counts(s, where=s.like(" %") | s.like("% ") | s.like("%  %"), rel=present)
    spaced = sorted({" ".join(str(v).split()) for v, _ in candidates[:1000]})
    twins = {v for v, _ in value_counts(s, where=s.isin(spaced), rel=present)} if spaced else set()
    # spaces at an end are stray; a doubled space inside only beside the same text spaced right
    counts = [(v, k) for v, k in candidates if v != v.strip() or " ".join(v.split()) in twins]
    n = sum(k for _, k in counts)
    paired = sorted({" ".join(v.split()) for v, _ in counts} & twins)
    evidence = dict(
        padded_rows=n,
        percent=pct(n, ROWS),
        examples=[v for v, _ in counts[:5]],
        values_beside_their_trimmed_form=paired[:5],
    )
    if not n:
        return outcome(hypothesis, "refuted", f"no value of {column} has a stray space", 0, **evidence)
    stats = (
        present.aggregate(values=lambda g: g.count(), shortest=s.length().min(), longest=s.length().max())
        .to_pyarrow()
        .to_pylist()[0]
    )
    # every value as long as every other, most of them padded: a fixed-width column, laid out on purpose
    if stats["shortest"] == stats["longest"] and n >= 0.9 * int(stats["values"]):
        return outcome(
            hypothesis,
            "refuted",
            f"every value of {column} is {stats['longest']} characters long: the spaces pad a fixed-width column",
            0,
            **evidence,
        )
    if paired:
        return outcome(
            hypothesis,
            "confirmed",
            f"{count(n, 'value')} carry stray spaces, and {len(paired)} of their "
            f"trimmed forms ({', '.join(repr(v) for v in paired[:3])}) are values of the column too",
            n,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(n, 'value')} carry stray spaces (e.g. {', '.join(repr(v) for v, _ in counts[:3])})",
        n,
        **evidence,
    )

"""The check of sentinel values issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import (
    as_number,
    count,
    is_placeholder,
    outcome,
    share,
    value_counts,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, t


# --- the block sent to the sandbox starts here ---
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
        return outcome(
            hypothesis,
            "refuted",
            "no cell holds these values on its own: they are words inside longer text, which is content",
            0,
            whole_cells=0,
        )
    # the other values: are they numbers (then a word among them is a placeholder)?
    others = value_counts(c, where=~whole & c.notnull(), limit=5000)
    other_rows = sum(k for _, k in others) or 1
    numeric_share = sum(k for v, k in others if as_number(v) is not None) / other_rows
    # the rows holding the value: are they incomplete elsewhere (more NULLs than the other rows)?
    neighbours = [x for x in t.columns if x != column][:40]
    lift_of = {}
    if neighbours:
        stats = (
            t.group_by(hit=whole)
            .aggregate(rows=lambda g: g.count(), **{f"n{i}": t[x].isnull().sum() for i, x in enumerate(neighbours)})
            .to_pyarrow()
            .to_pylist()
        )
        by = {bool(r["hit"]): r for r in stats if r["hit"] is not None}
        if True in by and False in by:
            for i, x in enumerate(neighbours):
                inside = int(by[True][f"n{i}"] or 0) / by[True]["rows"]
                outside = int(by[False][f"n{i}"] or 0) / by[False]["rows"]
                if int(by[True][f"n{i}"] or 0) >= 3 and inside >= 2 * outside + 0.05:
                    lift_of[x] = [round(inside, 3), round(outside, 3)]
    levels = len(others) + len(counts)
    evidence = dict(
        whole_cells=counts,
        rows=ROWS,
        percent=pct(n, ROWS),
        other_values_numeric=round(numeric_share, 3),
        incomplete_elsewhere=lift_of,
    )
    if text and numeric_share >= 0.9:
        return outcome(
            hypothesis,
            "confirmed",
            f"{count(n, 'cell')} hold a word in a column whose other values are "
            f"numbers ({share(numeric_share * other_rows, other_rows)})",
            n,
            **evidence,
        )
    meaning = [w for w in counts if is_placeholder(w)]
    if text and meaning:
        return outcome(
            hypothesis, "confirmed", f"{meaning} fill whole cells and say 'unknown' in so many words", n, **evidence
        )
    if text and levels <= 20 and n > other_rows:
        return outcome(
            hypothesis,
            "inconclusive",
            "it is the most common level of a small category: as "
            "likely a value of its own (such as 'no damage') as a placeholder",
            n,
            **evidence,
        )
    if not text and wanted:
        # a number repeated outside the range of every other value is a code, not a measurement
        rest = t.filter(~whole & c.notnull()).aggregate(lo=c.min(), hi=c.max()).to_pyarrow().to_pylist()[0]
        outside = [v for v in wanted if rest["lo"] is not None and (v < rest["lo"] or v > rest["hi"])]
        evidence["other_values_range"] = [rest["lo"], rest["hi"]]
        if outside and n >= 2:
            return outcome(
                hypothesis,
                "confirmed",
                f"{count(n, 'row')} repeat {outside[0]:g}, outside the range of every "
                f"other value ({rest['lo']:g} to {rest['hi']:g})",
                n,
                **evidence,
            )
    if lift_of:
        return outcome(
            hypothesis,
            "confirmed",
            f"the rows holding it lack other values more often "
            f"({', '.join(f'{k}: {v[0]:.0%} against {v[1]:.0%}' for k, v in list(lift_of.items())[:3])})",
            n,
            **evidence,
        )
    return outcome(
        hypothesis,
        "inconclusive",
        "the value fills whole cells, but neither the other values nor the rows around it say it means 'unknown'",
        n,
        **evidence,
    )

"""The check of scale_errors issues."""

from typing import TYPE_CHECKING

import ibis

from cataloger_dagster.core.investigate.checks.helpers import count, flagged_among_peers, outcome, share, verb

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import t

# --- the block sent to the sandbox starts here ---
SCALE_TAIL_GAP = 5.0  # a gap this many times the tail's scale cuts a value off its peers


def scale_tail_ratio(column, value, median, flagged, group, key):
    """How cut off `value` is from its peers on its side: the log gap to the nearest peer, in the
    scale of the peers' tail there (Hill's estimator: the mean log distance of the ten nearest
    peers to the eleventh).  Below SCALE_TAIL_GAP, the value is the end of a tail that thins out
    towards it, value after value: a true extreme of a skewed measure, not a slip."""
    import math

    c = t[column].cast("float64")
    peers = ~flagged & c.notnull() & (c > 0)
    if group:
        peers = peers & (t[group].cast("string") == key)
    side = peers & ((c > value) if value < median else (c < value))
    nearest = t.filter(side).select(v=c).order_by("v" if value < median else ibis.desc("v")).limit(11)
    near = [math.log(r["v"]) for r in nearest.to_pyarrow().to_pylist()]
    if len(near) < 4:
        return float("inf")
    gap = abs(near[0] - math.log(value))
    scale = sum(abs(x - near[-1]) for x in near[:-1]) / (len(near) - 1)
    return gap / max(scale, 1e-9)


def check_scale_errors(column, values, factor, group):
    hypothesis = (
        f"the flagged values of {column} are {factor:g} times off from their peers"
        + (f" of the same {group}" if group else "")
        + ": a unit or decimal slip"
    )
    # peers: the other positive values of the same group; the flagged values are judged by the
    # group's quartiles (on a log scale, the median is about their geometric mean)
    at_factor, level, on_tail, judged, examples = 0, 0, 0, 0, []
    c = t[column].cast("float64")
    flagged = c.notnull() & c.isin([float(v) for v in values])
    for k, v, n, (q1, q3), median, near, total in flagged_among_peers(column, values, group):
        judged += n
        ratio = v / median
        corrected = v / factor if ratio > 1 else v * factor
        if total and near >= 0.2 * total:
            level += n  # the group itself lives at that level: two populations, not a slip
        elif scale_tail_ratio(column, v, median, flagged, group, k) < SCALE_TAIL_GAP:
            on_tail += n  # the end of a tail that thins out towards it: a true extreme
        elif q1 / 2 <= corrected <= q3 * 2:
            at_factor += n
        if len(examples) < 5:
            examples.append(
                {
                    "value": v,
                    "ratio": round(ratio, 3),
                    "corrected": corrected,
                    "peers_quartiles": [q1, q3],
                    "peers_near_it": near,
                    **({"group": k} if group else {}),
                }
            )
    evidence = dict(
        rows=judged, at_factor=at_factor, at_the_group_level=level, on_a_tail=on_tail, factor=factor, examples=examples
    )
    if not judged:
        return outcome(
            hypothesis, "refuted", "no flagged value has peers to compare with (or none is left)", 0, **evidence
        )
    if level >= 0.5 * judged:
        return outcome(
            hypothesis,
            "refuted",
            f"{share(level, judged)} of them have many peers at the same level: "
            "their group is consistently there, not slipped by a factor",
            judged,
            **evidence,
        )
    if on_tail >= 0.5 * judged:
        return outcome(
            hypothesis,
            "refuted",
            f"{share(on_tail, judged)} of them end a tail of peers that thins out "
            "towards them value after value, with no gap a slip would leave: true extremes",
            judged,
            **evidence,
        )
    if at_factor < 0.5 * judged:
        return outcome(
            hypothesis,
            "refuted",
            f"only {count(at_factor, 'row')} of {judged:,} {verb(at_factor, 'is', 'are')} "
            f"about {factor:g} times off: divided by it, the others do not land among their peers",
            judged,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(at_factor, 'row')} {verb(at_factor, 'is', 'are')} about "
        f"{factor:g} times off their peers and {'lands' if at_factor == 1 else 'land'} between their quartiles "
        "once corrected",
        at_factor,
        **evidence,
    )

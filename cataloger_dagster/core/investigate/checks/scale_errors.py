"""The check of scale_errors issues."""

from cataloger_dagster.core.investigate.checks.helpers import count, flagged_among_peers, outcome, share, verb

# --- the block sent to the sandbox starts here ---
def check_scale_errors(column, values, factor, group):
    hypothesis = (f"the flagged values of {column} are {factor:g} times off from their peers"
                  + (f" of the same {group}" if group else "") + ": a unit or decimal slip")
    # peers: the other positive values of the same group; the flagged values are judged by the
    # group's quartiles (on a log scale, the median is about their geometric mean)
    at_factor, level, judged, examples = 0, 0, 0, []
    for k, v, n, (q1, q3), median, near, total in flagged_among_peers(column, values, group):
        judged += n
        ratio = v / median
        corrected = v / factor if ratio > 1 else v * factor
        if total and near >= 0.2 * total:
            level += n        # the group itself lives at that level: two populations, not a slip
        elif q1 / 2 <= corrected <= q3 * 2:
            at_factor += n
        if len(examples) < 5:
            examples.append({"value": v, "ratio": round(ratio, 3), "corrected": corrected,
                             "peers_quartiles": [q1, q3], "peers_near_it": near, **({"group": k} if group else {})})
    evidence = dict(rows=judged, at_factor=at_factor, at_the_group_level=level, factor=factor, examples=examples)
    if not judged:
        return outcome(hypothesis, "refuted", "no flagged value has peers to compare with (or none is left)", 0, **evidence)
    if level >= 0.5 * judged:
        return outcome(hypothesis, "refuted", f"{share(level, judged)} of them have many peers at the same level: "
                       "their group is consistently there, not slipped by a factor", judged, **evidence)
    if at_factor < 0.5 * judged:
        return outcome(hypothesis, "refuted", f"only {count(at_factor, 'row')} of {judged:,} {verb(at_factor, 'is', 'are')} "
                       f"about {factor:g} times off: divided by it, the others do not land among their peers", judged, **evidence)
    return outcome(hypothesis, "confirmed", f"{count(at_factor, 'row')} {verb(at_factor, 'is', 'are')} about "
                   f"{factor:g} times off their peers and {'lands' if at_factor == 1 else 'land'} between their quartiles "
                   "once corrected", at_factor, **evidence)

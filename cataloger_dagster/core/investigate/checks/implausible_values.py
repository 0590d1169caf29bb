"""The check of implausible_values issues."""

from cataloger_dagster.core.investigate.checks.helpers import count, flagged_among_peers, outcome, verb


# --- the block sent to the sandbox starts here ---
def check_implausible_values(column, values, group):
    import math

    hypothesis = (
        f"the flagged values of {column} are errors: ten times or more from their"
        + (f" {group}" if group else "")
        + " group, with no other value of it near them"
    )
    far, crowded, judged, examples = 0, 0, 0, []
    for k, v, n, (q1, q3), median, near, _ in flagged_among_peers(column, values, group):
        judged += n
        if near:
            crowded += n  # other values of its group keep it company: a tail, not an error
        elif abs(math.log10(v / median)) >= 1:
            far += n
        if len(examples) < 5:
            examples.append(
                {
                    "value": v,
                    "ratio": round(v / median, 3),
                    "peers_quartiles": [q1, q3],
                    "peers_near_it": near,
                    **({"group": k} if group else {}),
                }
            )
    evidence = dict(rows=judged, far=far, with_company=crowded, examples=examples)
    if not judged:
        return outcome(
            hypothesis, "refuted", "no flagged value has peers to compare with (or none is left)", 0, **evidence
        )
    if far < 0.5 * judged:
        return outcome(
            hypothesis,
            "refuted",
            f"only {far:,} of {count(judged, 'row')} {verb(far, 'is', 'are')} ten "
            f"times or more from their group's median and alone; {crowded:,} have other values of their "
            "group within a factor of two: the group's own tail",
            judged,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(far, 'row')} {verb(far, 'is', 'are')} ten times or more from "
        "the median of their group, with no other value of it within a factor of two",
        far,
        **evidence,
    )

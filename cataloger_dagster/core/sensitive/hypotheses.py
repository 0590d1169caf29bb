"""A column's class of personal or secret data as a hypothesis the investigations stage tests,
like any finding: the classifier decides from the first values it samples, the sandbox check
(core/investigate/checks/sensitive_class.py) re-validates the class on a larger seeded sample.

A verdict is learned: the next run's classification carries the latest verdict of each of the
column's classes (`last_investigations`, `with_verdicts`), so a refuted class is left out of the
column's Dagster tags and of the list of personal data from the next profile on, while its values
stay masked (privacy errs on the safe side: the first values held the class).  The class is still
investigated each run, so a later confirming verdict brings it back; a person's review outranks
any verdict (a class a person said is personal is never refuted by one).
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable, Optional

from cataloger_dagster.core.layout import INVESTIGATIONS, table_prefix
from cataloger_dagster.core.models import ColumnProfile, CodeInvestigation, IssueModel, SensitiveClass, TableProfile
from cataloger_dagster.core.results import latest_results
from cataloger_dagster.core.sensitive.classes import KEYS, label
from cataloger_dagster.core.sensitive.classifier import BY_VALUES, RULES, WITH_NAME, coordinate_bound
from cataloger_dagster.core.store import Store

TYPE = "sensitive_class"
SAMPLE_VALUES = 5_000  # non-null values the check reads: many times what the classifier saw
SEED = 20_240_917  # the sample's seed: the same rows each run, so the verdict is reproducible
# the classes the sandbox check has a rule for: every one (core/sensitive/rules.py runs there too)
CHECKED = KEYS


def rule_names(data_class: str, kind: str, named: bool) -> list[str]:
    """The classifier's rules of the class it could have applied to a column of this kind: those
    that need the column's name (or its neighbours) only when the claim had them."""
    applied = [r for r in RULES if r.key == data_class and kind in r.kinds and (r.by_values or named)]
    # a value validates when any rule takes it: the looser shapes, which need the name, are tried
    # first, as they are the cheaper (a phone number's shape before phonenumbers' sixteen regions)
    return [r.validate.__name__ for r in sorted(applied, key=lambda r: r.by_values)]


def hypothesis_id(table: str, column: str, data_class: str) -> str:
    return f"{table}_{TYPE}_{data_class}_{column}"


def class_hypotheses(profile: TableProfile, today: Optional[dt.date] = None) -> list[IssueModel]:
    """One hypothesis per class the classifier gave a column from its values, of the classes the
    sandbox can check; a class found inside free text, or added by a person's review, is not the
    classifier's claim about the whole value."""
    day = (today or dt.date.today()).isoformat()
    found = []
    for column in profile.columns:
        for held in column.sensitive:
            if held.in_text or held.source != "classifier" or held.name not in CHECKED:
                continue
            by_name = any(s.startswith("column name:") for s in held.signals)
            named = by_name or any(s.startswith("neighbours:") for s in held.signals)
            found.append(
                IssueModel(
                    id=hypothesis_id(profile.table, column.name, held.name),
                    type=TYPE,
                    severity="low",
                    description=f"{column.name} holds {label(held.name)} values "
                    f"({held.share:.0%} of {held.sampled:,} sampled values validated)",
                    affectedColumns=[column.name],
                    suggestedAction="nothing: the investigation confirms or refutes the class",
                    category="quick_fixes",
                    source="sensitive",
                    details={
                        "data_class": held.name,
                        "label": label(held.name),
                        "needed": WITH_NAME if by_name else BY_VALUES,
                        "rules": rule_names(held.name, column.kind, named),
                        "bound": coordinate_bound(column.name) if held.name == "geolocation" else None,
                        "today": day,
                        "most": SAMPLE_VALUES,
                        "seed": SEED,
                    },
                )
            )
    return found


def with_verdicts(profile: TableProfile, investigations: Iterable[CodeInvestigation]) -> TableProfile:
    """The profile with each class's verdict from its hypothesis's investigation (this run's, or
    the latest run's when the next classification carries them).  A refuted class stays in the
    profile (its values stay masked); the tags, the page and the list of personal data read its
    verdict and leave it out.  A class a person reviewed as personal is never refuted by one."""
    verdicts = {inv.issue_id: inv.verdict for inv in investigations if inv.issue_id and inv.verdict}
    if not verdicts:
        return profile
    out = profile.model_copy(deep=True)
    for column in out.columns:
        for held in column.sensitive:
            said = verdicts.get(hypothesis_id(out.table, column.name, held.name), held.verdict)
            held.verdict = None if said == "refuted" and held.reviewed else said
    return out


def last_investigations(store: Store, database: str, table: str) -> list[CodeInvestigation]:
    """The investigations of the table's latest run that stored them (none before its first)."""
    found = latest_results(store, table_prefix(database, table), INVESTIGATIONS, limit=1)
    return list(found[0][1].investigations) if found else []


def standing_classes(column: ColumnProfile) -> list[SensitiveClass]:
    """The column's classes its investigation did not refute."""
    return [c for c in column.sensitive if c.verdict != "refuted"]

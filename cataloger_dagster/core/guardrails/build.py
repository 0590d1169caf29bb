"""A table's guardrail suite, written from one run's results: its profile (and the profiles of
the runs before), its findings with their investigations' verdicts and reviews, and the rules
its rows follow."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import ibis

from cataloger_dagster.core.guardrails import guards, pins
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite, Unguarded
from cataloger_dagster.core.guardrails.queries import dialect_of
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile


@dataclass
class RunResults:
    """What one run of a table left: the inputs of its suite."""

    profile: TableProfile
    analysis: AnalysisResultModel
    investigations: Optional[InvestigationsResult] = None
    history: Sequence[TableProfile] = field(default_factory=tuple)  # earlier runs' profiles, oldest first
    built_at: str = ""
    version: int = 1


def build_suite(
    table: ibis.Table,
    results: RunResults,
    *,
    dialect: Optional[str] = None,
    tables: Optional[Mapping[str, ibis.Table]] = None,
) -> GuardrailSuite:
    """The suite of `table` (bound to its backend, or unbound with `dialect` given)."""
    dialect = dialect or dialect_of(table)
    facts = pins.Facts(table, dialect, results.profile, results.history)
    made: list[Guardrail] = [*_pinned(facts, results.analysis)]
    unguarded: list[Unguarded] = []
    verdicts = {
        i.issue_id: i.verdict
        for i in (results.investigations.investigations if results.investigations else [])
        if i.verdict
    }
    for issue in [*results.analysis.issues, *results.analysis.reviewed]:
        how = guards.standing(issue, verdicts)
        if how is None:
            continue
        got = guards.guard(facts, issue, how, tables or {})
        (made if isinstance(got, Guardrail) else unguarded).append(got)  # type: ignore[arg-type]
    return GuardrailSuite(
        database=results.profile.database,
        table=results.profile.table,
        dialect=dialect or "",
        built_at=results.built_at,
        version=results.version,
        guardrails=_unique(made),
        unguarded=unguarded,
    )


def _pinned(f: pins.Facts, analysis: AnalysisResultModel) -> list[Guardrail]:
    made: list[Optional[Guardrail]] = [pins.row_count(f), pins.freshness(f)]
    key = pins.key_column(f.profile)
    if key:
        made.append(pins.unique(f, key))
    for cp in f.profile.columns:
        made += [pins.null_rate(f, cp), pins.accepted_values(f, cp), pins.value_range(f, cp), pins.pattern(f, cp)]
    made += [pins.rule(f, r) for r in analysis.rules if r.holds == r.applies]  # the broken ones are findings
    return [g for g in made if g is not None]


def _unique(made: list[Guardrail]) -> list[Guardrail]:
    """One guardrail per name: a finding's guard replaces the profile's pin of the same test, and
    two findings on the same test keep both, the second named with its finding."""
    by_name: dict[str, Guardrail] = {}
    for g in made:
        before = by_name.get(g.name)
        if before is not None and before.guards and g.guards:
            g = g.model_copy(update={"name": f"{g.name}:{g.guards}"})
        by_name[g.name] = g
    return list(by_name.values())

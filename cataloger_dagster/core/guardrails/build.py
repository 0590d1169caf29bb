"""A table's guardrail suite, written from one run's results: its profile (and the profiles of
the runs before), its findings with their investigations' verdicts and reviews, and the rules
its rows follow."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import ibis

from cataloger_dagster.core.guardrails import guards, pins
from cataloger_dagster.core.guardrails.model import Covered, Guardrail, GuardrailSuite, Unguarded
from cataloger_dagster.core.guardrails.queries import dialect_of
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.writeback.documented import DbtTest, covered_by_dbt


@dataclass
class RunResults:
    """What one run of a table left: the inputs of its suite."""

    profile: TableProfile
    analysis: AnalysisResultModel
    investigations: Optional[InvestigationsResult] = None
    history: Sequence[TableProfile] = field(default_factory=tuple)  # earlier runs' profiles, oldest first
    built_at: str = ""
    version: int = 1
    dbt_tests: Sequence[DbtTest] = field(default_factory=tuple)  # the table's tests in a dbt project


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
    kept, covered = _not_in_dbt(_unique(made), list(results.dbt_tests))
    return GuardrailSuite(
        database=results.profile.database,
        table=results.profile.table,
        dialect=dialect or "",
        built_at=results.built_at,
        version=results.version,
        guardrails=kept,
        unguarded=unguarded,
        covered=covered,
    )


def _not_in_dbt(made: list[Guardrail], tests: list[DbtTest]) -> tuple[list[Guardrail], list[Covered]]:
    """The profile's pins that no dbt test makes, and those one does; a finding's guard always
    stays, since it tracks that finding's band, not the test's zero."""
    kept, covered = [], []
    for g in made:
        test = covered_by_dbt(g.kind, g.columns, tests) if g.pinned_by == "profile" else None
        if test is None:
            kept.append(g)
        else:
            covered.append(Covered(name=g.name, dbt_test=test))
    return kept, covered


def _pinned(f: pins.Facts, analysis: AnalysisResultModel) -> list[Guardrail]:
    made: list[Optional[Guardrail]] = [pins.row_count(f), pins.freshness(f)]
    key = pins.key_column(f.profile)
    if key:
        made.append(pins.unique(f, key))
    for cp in f.profile.columns:
        one = f.on(cp.name, key)  # each column's statements name it and the key only
        made += [
            pins.null_rate(one, cp),
            pins.accepted_values(one, cp),
            pins.value_range(one, cp),
            pins.pattern(one, cp),
        ]
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

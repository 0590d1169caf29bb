"""The guardrail suite of a table, as stored with each run (``guardrails.json``)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

GuardrailKind = Literal[
    "row_count",  # the table's rows stay within a band
    "null_rate",  # a column's share of NULLs stays within a band
    "unique",  # a key's values are never repeated
    "accepted_values",  # a category holds only its known values
    "range",  # a number stays between its bounds
    "pattern",  # a text keeps its format
    "rule",  # a rule between columns holds
    "reference",  # a column's values have their row in the referenced table
    "padding",  # a text has no spaces at either end
    "placeholder",  # a placeholder value standing for missing does not come back or grow
    "freshness",  # the newest update is recent enough
]
GUARDRAIL_KINDS: tuple[str, ...] = GuardrailKind.__args__  # type: ignore[attr-defined]

# What `measured` counts: rows breaking the expectation, a share of the rows, the table's rows,
# or seconds since the newest update.
Measure = Literal["rows", "share", "count", "seconds"]


class Guardrail(BaseModel):
    name: str  # unique within the suite and stable across runs: "<kind>:<columns>"
    kind: GuardrailKind
    columns: list[str] = Field(default_factory=list)
    sql: str  # one SELECT returning one row whose first value is `measured`
    measure: Measure = "rows"
    low: Optional[float] = None  # the band `measured` must stay in (None: unbounded)
    high: Optional[float] = None
    why: str  # a sentence: the finding it guards or the fact it pins, and where its band comes from
    guards: Optional[str] = None  # the id of the finding it guards
    pinned_by: Literal["profile", "finding", "expected", "rule"] = "profile"
    keys_sql: Optional[str] = None  # a sample of the breaking rows' keys, for a failing result

    def holds(self, measured: Optional[float]) -> bool:
        if measured is None:
            return self.measure == "rows"  # no row to break it (an empty table)
        if self.low is not None and measured < self.low:
            return False
        return self.high is None or measured <= self.high


class Unguarded(BaseModel):
    """A finding that has no guardrail, and why (its detector gives no row-level test)."""

    finding: str
    type: str
    reason: str


class Covered(BaseModel):
    """A check the profile would pin that a dbt test of the table already makes: left out of
    the suite, so that the two never run the same assertion twice."""

    name: str  # the guardrail's name it would have had
    dbt_test: str  # the dbt test's name


class FollowUp(BaseModel):
    """What the catalog run after a failing guardrail made of it: the investigation of the finding
    it guards confirmed the failure (the guardrail stands), or refuted it (its band is relearned
    from what it measured)."""

    guardrail: str
    guards: Optional[str] = None  # the finding it guards
    failed_at: str  # when the guardrail check that failed ran
    measured: float
    low: Optional[float] = None  # the band it failed
    high: Optional[float] = None
    outcome: Literal["confirmed", "relearned"]
    new_low: Optional[float] = None  # the relearned band (outcome "relearned")
    new_high: Optional[float] = None

    def sentence(self) -> str:
        guarding = f" (guarding {self.guards})" if self.guards else ""
        failed = f"{self.guardrail}{guarding} failed at {self.measured:g} (allowed {band_text(self.low, self.high)}) on {self.failed_at}"
        if self.outcome == "confirmed":
            return f"{failed}; this run's investigation confirmed it, so it stands"
        return (
            f"{failed}; this run's investigation refuted it, so its band is relearned: "
            f"{band_text(self.new_low, self.new_high)}"
        )


def band_text(low: Optional[float], high: Optional[float]) -> str:
    """A band as people read it: ``low..high``, a side left empty when unbounded."""
    return f"{'' if low is None else f'{low:g}'}..{'' if high is None else f'{high:g}'}"


class GuardrailSuite(BaseModel):
    database: str
    table: str
    dialect: str  # the SQL dialect of every assertion (sqlglot's name)
    built_at: str  # the run's timestamp it was built from
    version: int = 1  # the number of suites of this table so far, this one included
    guardrails: list[Guardrail] = Field(default_factory=list)
    unguarded: list[Unguarded] = Field(default_factory=list)
    covered: list[Covered] = Field(default_factory=list)
    followed_up: list[FollowUp] = Field(default_factory=list)  # the failures since the previous suite

    def named(self, name: str) -> Optional[Guardrail]:
        return next((g for g in self.guardrails if g.name == name), None)


class GuardrailResult(BaseModel):
    name: str
    kind: GuardrailKind
    passed: bool
    measured: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    failing_keys: list[str] = Field(default_factory=list)  # shown masked like every value
    error: Optional[str] = None  # the statement failed: the guardrail did not run
    guards: Optional[str] = None


class GuardrailCheck(BaseModel):
    """One run of a table's suite against its database, as its log in the store keeps it."""

    database: str
    table: str
    checked_at: str  # a store timestamp
    dagster_run_id: str = ""
    suite_version: int
    built_at: str  # the catalog run the suite was built from
    results: list[GuardrailResult] = Field(default_factory=list)

    @property
    def failing(self) -> list[GuardrailResult]:
        return [r for r in self.results if not r.passed]

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


class GuardrailSuite(BaseModel):
    database: str
    table: str
    dialect: str  # the SQL dialect of every assertion (sqlglot's name)
    built_at: str  # the run's timestamp it was built from
    version: int = 1  # the number of suites of this table so far, this one included
    guardrails: list[Guardrail] = Field(default_factory=list)
    unguarded: list[Unguarded] = Field(default_factory=list)
    covered: list[Covered] = Field(default_factory=list)

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

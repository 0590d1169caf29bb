"""The contracts between stages.

`DatasetUnderstandingModel`, `AnalysisResultModel`, `IssueModel` and
`CodeInvestigation` keep their field names exactly (`rowCount`...), because prompts,
stored JSON and the agents all speak them.  The profile models are ours.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Optional

from pydantic import BaseModel, Field, model_validator

# --------------------------------------------------------------------------
# table_profile
# --------------------------------------------------------------------------

ColumnKind = Literal[
    "integer",
    "decimal",
    "float",
    "string",
    "boolean",
    "date",
    "timestamp",
    "time",
    "uuid",
    "binary",
    "interval",
    "nested",
    "json",
    "other",
]
# The kinds that hold numbers and the kinds that hold points in time: a mean and quantiles are
# taken of the first, a range of both (a histogram of each, a drift test for each).
NUMERIC_KINDS: tuple[ColumnKind, ...] = ("integer", "decimal", "float")
TEMPORAL_KINDS: tuple[ColumnKind, ...] = ("date", "timestamp")

# Text patterns counted for every string column.  `semantic_type` is the
# pattern most non-null values match (see table_profile).
TEXT_PATTERNS = (
    "email",
    "url",
    "uuid",
    "phone",
    "number",
    "date",
    "sentinel",
    "blank",
    "padded",
)


class ValueCount(BaseModel):
    value: Any
    count: int


class LengthStats(BaseModel):
    min: Optional[int] = None
    max: Optional[int] = None
    mean: Optional[float] = None


class Histogram(BaseModel):
    # len(edges) == len(counts) + 1; edges are numbers, or ISO strings for dates
    edges: list[Any]
    counts: list[int]


class SensitiveClass(BaseModel):
    """One class of personal or secret data found in a column (core/sensitive), with its evidence."""

    name: str  # a key of core/sensitive/classes.py CLASSES
    share: float  # of the sampled values, the share that validates (in free text: that holds one)
    sampled: int  # the non-null values looked at
    matched: int
    examples: list[str] = Field(default_factory=list)  # masked: their shape only
    signals: list[str] = Field(default_factory=list)  # what decided it: validators, the name, neighbours
    in_text: bool = False  # found inside free text, not as the whole value
    source: Literal["classifier", "review"] = "classifier"  # "review": a person added it
    reviewed: bool = False  # a person's verdict says it is personal data (core/sensitive/teaching.py)
    # what its latest investigation (core/sensitive/hypotheses.py) said: the previous run's, carried
    # by the profile, then the run's own when a page or list reads its investigations; None: not
    # investigated
    verdict: Optional[Literal["confirmed", "refuted", "inconclusive"]] = None


class ColumnProfile(BaseModel):
    name: str
    dtype: str  # ibis type as text, e.g. "int64", "!string"
    kind: ColumnKind
    nullable: bool = True
    count: int  # non-null values
    nulls: int
    null_fraction: float
    nan_count: Optional[int] = None  # floats only
    distinct: Optional[int] = None
    distinct_approximate: bool = False
    min: Any = None
    max: Any = None
    mean: Optional[float] = None
    std: Optional[float] = None
    # keys "p05", "p25", "p50", "p75", "p95"
    quantiles: Optional[dict[str, Any]] = None
    top_values: Optional[list[ValueCount]] = None
    length: Optional[LengthStats] = None
    histogram: Optional[Histogram] = None
    # pattern name (TEXT_PATTERNS) -> number of non-null values matching it
    pattern_counts: Optional[dict[str, int]] = None
    semantic_type: Optional[str] = None
    # statistics skipped for this column and why ("std: not defined for boolean")
    notes: list[str] = Field(default_factory=list)
    # SQLite only: non-null values per storage class ("integer", "real", "text", "blob"),
    # set when they are not all of the class the declared type implies
    storage_classes: Optional[dict[str, int]] = None
    # why the column was profiled as its text (a type the backend's functions or Arrow do not
    # take, a mixed SQLite column), or None: every stage then reads it as text
    profiled_as_text: Optional[str] = None
    # the personal or secret data the column holds, decided from a sample of its values
    sensitive: list[SensitiveClass] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _as_text_of_earlier_profiles(cls, data: Any) -> Any:
        """A profile stored before `profiled_as_text` said it only in a note."""
        if isinstance(data, dict) and "profiled_as_text" not in data:
            why = _as_text_note(data.get("notes") or [])
            if why is not None:
                data = {**data, "profiled_as_text": why}
        return data

    def __setstate__(self, state: dict[str, Any]) -> None:
        # pickled by an earlier version (the IO manager's files): the fields added since take
        # their defaults, and `profiled_as_text` what the notes said
        values = state.get("__dict__", {})
        if "profiled_as_text" not in values:
            values["profiled_as_text"] = _as_text_note(values.get("notes") or [])
        for name, info in type(self).model_fields.items():
            if name not in values and not info.is_required():
                values[name] = info.get_default(call_default_factory=True)
        super().__setstate__(state)


AS_TEXT_NOTE = "profiled as text: "


def _as_text_note(notes: list[str]) -> Optional[str]:
    return next((note[len(AS_TEXT_NOTE) :] for note in notes if note.startswith(AS_TEXT_NOTE)), None)


class Fingerprint(BaseModel):
    schema_hash: str
    row_count: int
    update_column: Optional[str] = None
    max_updated: Optional[str] = None
    value: str  # one string that changes when any part does


class Degradation(BaseModel):
    """A stage that could not do its whole work on a table: the table is `degraded`, not `ok`.

    `reason` is a short sentence for a person (never a backend's raw error text)."""

    stage: str  # "profile", "snapshot", a detector's name...
    column: Optional[str] = None  # None when the whole table is concerned
    reason: str


NullPatternKind = Literal["below", "above", "among", "not_among", "monotone", "not_null_when"]


class NullPattern(BaseModel):
    """Where a table's NULLs are, as another column explains them (core/profile/nulls.py).

    kinds: "below" / "above" (NULL exactly when `by` < / > `value`), "among" (NULL exactly when
    `by` is one of `value`), "not_among" (NULL exactly when `by` is none of `value`), "monotone"
    (a column family whose each member is NULL wherever the one before it is), and
    "not_null_when" (each of `columns` holds a value whenever `by` does, but on `exceptions` rows:
    a rule whose exceptions are a finding, not structure)."""

    kind: NullPatternKind
    columns: list[str]  # the columns whose NULLs it describes
    by: Optional[str] = None  # the column that explains them
    value: Any = None  # the threshold, or the values of `by`
    rows: int = 0  # the NULL rows it explains (the rule's rows: both NULL)
    exceptions: int = 0  # rows against it (not_null_when only)
    sentence: str


class TableProfile(BaseModel):
    database: str
    table: str
    row_count: int
    column_count: int
    columns: list[ColumnProfile]
    sample_rows: list[dict[str, Any]]  # JSON-safe values, at most 5 rows
    fingerprint: Fingerprint
    approximate: bool = False  # distinct counts approximate on this table
    queries: int = 0  # queries sent to the database
    duration_s: float = 0.0
    profiled_at: str = ""
    # what the profile could not compute, column by column (see Degradation)
    degradations: list[Degradation] = Field(default_factory=list)
    # what other columns say of the NULLs (mined in one query: core/profile/nulls.py)
    null_patterns: list[NullPattern] = Field(default_factory=list)

    def column(self, name: str) -> ColumnProfile:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.table!r} has no column {name!r}")


# --------------------------------------------------------------------------
# table_understanding
# --------------------------------------------------------------------------


class DatasetSummaryModel(BaseModel):
    name: str
    description: str
    rowCount: int
    columnCount: int
    observations: list[str]


SummaryDataType = Literal["string", "numeric", "date", "categorical", "boolean"]


class ColumnSummaryModel(BaseModel):
    name: str
    dataType: SummaryDataType
    description: str
    sampleValues: list[Any]


class DatasetUnderstandingModel(BaseModel):
    summary: DatasetSummaryModel
    columns: list[ColumnSummaryModel]
    suggested_context: str


# --------------------------------------------------------------------------
# quality_issues
# --------------------------------------------------------------------------

Severity = Literal["low", "medium", "high"]
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low")  # most severe first
Category = Literal["quick_fixes", "smart_fixes"]


def severity_counts(severities: Iterable[Any]) -> dict[str, int]:
    """How many of each severity, every severity present (0 if none), most severe first.
    Takes the severities, not the issues, so stored JSON counts as models do."""
    found = list(severities)
    return {s: found.count(s) for s in SEVERITIES}


# The issue types the deterministic detectors emit; an LLM may add others.
ISSUE_TYPES = (
    "missing_values",  # nulls or blanks in a column
    "sentinel_values",  # 'NA', 'N/A', '-', -999, 9999 ... standing for missing
    "duplicate_rows",  # whole rows repeated (affectedColumns: all columns)
    "duplicate_keys",  # a candidate key column with repeated values
    "numeric_as_text",  # numbers stored in a text column
    "date_as_text",  # dates stored as text, or as integers written YYYYMMDD or YYYYMM
    "outliers",  # values far outside the column's distribution
    "scale_errors",  # values off from their column or group by a unit factor (x1000, x2.54)
    "implausible_values",  # values ten times or more from their group, usual for the column
    "mixed_units",  # one text column holding values in several units or notations
    "inconsistent_categories",  # casing / near-duplicate spelling variants of one label
    "whitespace_values",  # text with spaces at either end or doubled inside
    "invalid_format",  # values not matching the column's semantic type
    "constant_column",  # one value only
    "out_of_range",  # implausible values: negative quantities, future dates
    "orphan_references",  # values with no matching row in the referenced table
    "rule_violations",  # rows that break a rule between columns the other rows follow
)

# The issue a table without rows gets, and no other (core.issues.detectors.empty): apart from
# ISSUE_TYPES, since the demo's tables all hold rows.
TABLE_STATE_ISSUE_TYPES = (
    "empty_table",  # the table has no rows
)

# The issue types found from a table's stored history (core.history.anomalies, source "history"),
# not from a scan: apart from ISSUE_TYPES, which a single snapshot (the demo database) can show all of.
HISTORY_ISSUE_TYPES = (
    "volume_anomaly",  # the row-count change since the previous run outside its expected band
    "stale_table",  # the update column / fingerprint still for longer than its usual interval
    "schema_change",  # columns added, dropped, retyped or renamed since the previous run
    "distribution_drift",  # PSI on histograms / top values, null-rate or distinct-ratio jump
)


# --------------------------------------------------------------------------
# smart-fix follow-ups (the agent's fourth stage)
# --------------------------------------------------------------------------


class SmartFixOptionModel(BaseModel):
    key: str
    label: str


class SmartFixAction(BaseModel):
    """What choosing an option does: the option's ``onResponse`` value (``action`` and
    ``parameters``), with the fix script that does it.  The script is written to the store
    (``file``, in the run folder) for a person to read and run; cataloger never runs it
    against the source.  No script (``language`` None) for "keep as is" or "fix by hand"."""

    action: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    # ours
    description: str = ""
    language: Optional[Literal["sql", "python"]] = None
    dialect: Optional[str] = None  # the SQL dialect the script is written in
    script: Optional[str] = None
    file: Optional[str] = None  # e.g. "fixes/orders_outliers_total.cap.sql"


class SmartFixFollowupModel(BaseModel):
    """One question about a smart-fix issue, 2-4 options, and what each option does."""

    prompt: str
    options: list[SmartFixOptionModel] = Field(min_length=2, max_length=4)
    examples: Optional[str] = None
    onResponse: Optional[dict[str, SmartFixAction]] = None
    # ours: "heuristic" (drawn from the detector's evidence) or "anthropic:<prompt version>"
    source: str = "heuristic"


ReviewState = Literal["dismissed", "worse_since_dismissed", "expected", "changed_since_expected", "accepted"]


class ReviewMark(BaseModel):
    """What a person's review of an issue makes of it in this run (`core.reviews.memory`)."""

    state: ReviewState
    verdict: str  # the review's: accept, dismiss or expected
    reviewer: str
    at: str  # when the review was made (ISO-8601 UTC)
    note: str = ""
    reviewed_id: str  # the id reviewed: another one when a column was renamed since
    rows_then: Optional[int] = None  # affectedRows when reviewed
    rows_now: Optional[int] = None
    new_columns: list[str] = Field(default_factory=list)  # affected now, not when reviewed
    renamed: dict[str, str] = Field(default_factory=dict)  # column when reviewed -> its name now
    open_since: Optional[str] = None  # accepted: when it was first seen (or accepted)


class PrecisionMark(BaseModel):
    """The detector's learned precision lowered this finding: people of this database dismissed
    its findings on similar columns (same kind and semantic type) this many times."""

    dismissals: int
    column_kind: str  # "kind/semantic type", as `core.reviews.column_kind`
    severity_was: str  # the detector's severity before it was lowered
    note: str


class IssueModel(BaseModel):
    id: str
    type: str
    severity: Severity
    description: str
    affectedColumns: list[str]
    suggestedAction: str
    category: Category
    affectedRows: Optional[int] = None
    temporalPattern: Optional[str] = None
    # ours: which detector or agent raised it, and the numbers behind it
    source: str = "detector"
    details: dict[str, Any] = Field(default_factory=dict)
    # smart_fixes only: the guided follow-up (None in results stored before it existed)
    followup: Optional[SmartFixFollowupModel] = None
    # set by the review memory (None in results stored before it existed)
    review: Optional[ReviewMark] = None
    precision: Optional[PrecisionMark] = None


RuleKind = Literal["sum", "product", "multiple", "order"]


class ColumnRule(BaseModel):
    """A rule between columns that the table's rows follow, found from the data: a total that is
    the sum of its parts, a product or ratio (``factor`` times the operands' product, or a
    quotient when ``divides``), a fixed multiple, or an order (``result`` <= ``operands[0]``).
    Rules that hold on every row are knowledge about the table; the rows that break one that
    holds on nearly every row are a finding (rule_violations)."""

    kind: RuleKind
    formula: str  # as a person reads it: "total = subtotal + shipping"
    result: str  # the column on the left of the formula
    operands: list[str]  # the columns on its right
    factor: float = 1.0  # k in "c = k * a" and "c = k * a / b"
    divides: bool = False  # "c = k * a / b" rather than "c = k * a * b"
    holds: int  # rows where the rule holds...
    applies: int  # ...of the rows where every column has a value
    # rounding accepted: half the step each column's values are rounded to (0.01 for cents),
    # carried through the formula, plus a relative part for floating-point noise
    steps: dict[str, float] = Field(default_factory=dict)
    relative: float = 1e-9

    @property
    def columns(self) -> list[str]:
        return [self.result, *self.operands]


class AnalysisResultModel(BaseModel):
    issues: list[IssueModel]
    summary: str
    completedAt: str
    # what the profile and the detectors could not do: the table's status is then "degraded"
    degradations: list[Degradation] = Field(default_factory=list)
    # found but not raised: a person dismissed them (within tolerance) or marked them expected;
    # they count in no health score, check or issue count, and the page lists them apart
    reviewed: list[IssueModel] = Field(default_factory=list)
    # low-severity findings no longer raised: their detector was dismissed on similar columns
    quieted: list[IssueModel] = Field(default_factory=list)
    # rules between columns that every row follows (core.issues.detectors.rules)
    rules: list[ColumnRule] = Field(default_factory=list)

    @property
    def status(self) -> str:
        return "degraded" if self.degradations else "ok"


def missing_severity(fraction: float) -> Severity:
    """The missing-values thresholds: >50% high, 20-50% medium, <20% low."""
    if fraction > 0.5:
        return "high"
    if fraction >= 0.2:
        return "medium"
    return "low"


# --------------------------------------------------------------------------
# investigations (each with its verdict)
# --------------------------------------------------------------------------

Verdict = Literal["confirmed", "refuted", "inconclusive"]


class CodeInvestigation(BaseModel):
    code: str
    success: bool
    output: Any
    error: Optional[str] = None
    execution_time_ms: Optional[float] = None
    # ours
    issue_id: str = ""
    verdict: Optional[Verdict] = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    hypothesis: Optional[str] = None  # what the check tested
    reason: Optional[str] = None  # the evidence that decided the verdict
    affected: Optional[int] = None  # rows the check counts (comparable to the issue's affectedRows)
    # set by the host: what the sandbox saw when it saw a sample, the count scaled to the table, and
    # a note where the investigation's count and the issue's differ
    sample: Optional[dict[str, Any]] = None
    affected_in_table: Optional[int] = None
    count_note: Optional[str] = None


def pass_rate(investigations: list[CodeInvestigation] | None) -> Optional[float]:
    """Investigations whose code ran and decided (confirmed or refuted) / all investigations.

    A check that crashes, or that can no longer tell (inconclusive, as after a schema change its
    code did not foresee), lowers it: a falling pass rate makes the next run relearn."""
    if not investigations:
        return None
    passed = sum(1 for inv in investigations if inv.success and inv.verdict in ("confirmed", "refuted"))
    return passed / len(investigations)


class InvestigationsResult(BaseModel):
    """The investigations stage's output (investigations.json)."""

    table: str
    investigations: list[CodeInvestigation]
    # investigations whose code ran and reached a verdict / all; None when there was no issue
    pass_rate: Optional[float] = None
    cells: int = 0  # sandbox cells run
    sandbox_seconds: float = 0.0
    explored: bool = True  # True when no earlier script was used
    based_on: Optional[str] = None  # timestamp of the earlier script fed forward
    based_on_table: Optional[str] = None  # set when it came from another table (transfer)
    reused: list[str] = Field(default_factory=list)  # issue ids answered by reused code
    relearned: list[str] = Field(default_factory=list)  # issue ids whose reused code failed
    refreshed: list[str] = Field(default_factory=list)  # rerun with the detector's current arguments
    backend: str = ""
    agent: str = ""

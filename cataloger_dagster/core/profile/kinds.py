"""What the profiler makes of a column's type: its kind, the word a note uses for it, and
the column as it is being profiled (`Column`: its expression, notes and degradations)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import ibis.expr.datatypes as dt_
import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.models import AS_TEXT_NOTE, NUMERIC_KINDS, TEMPORAL_KINDS, ColumnKind, Degradation

log = logging.getLogger(__name__)

# the kinds whose values get top values (and, for numbers and dates, histograms)
TOP_KINDS = NUMERIC_KINDS + TEMPORAL_KINDS + ("string", "boolean", "time", "uuid", "json", "interval")
# the kinds without distinct/min/max/mean/std: their values are containers or bytes
CONTAINER_KINDS = ("nested", "binary", "json")


def column_kind(dtype: dt_.DataType) -> ColumnKind:
    if dtype.is_boolean():
        return "boolean"
    if dtype.is_integer():
        return "integer"
    if dtype.is_decimal():
        return "decimal"
    if dtype.is_floating():
        return "float"
    if dtype.is_string():
        return "string"
    if dtype.is_timestamp():
        return "timestamp"
    if dtype.is_date():
        return "date"
    if dtype.is_time():
        return "time"
    if dtype.is_uuid():
        return "uuid"
    if dtype.is_binary():
        return "binary"
    if dtype.is_interval():
        return "interval"
    if dtype.is_json():
        return "json"
    if dtype.is_nested():
        return "nested"
    return "other"


def type_word(dtype: dt_.DataType, kind: str) -> str:
    if kind == "nested":
        return "array" if dtype.is_array() else "struct" if dtype.is_struct() else "map"
    return kind


_STAT_WORDS = {
    "q": "quantiles",
    "pat": "pattern counts",
    "len": "lengths",
    "true": "true count",
    "distinct": "distinct count",
    "nan": "NaN count",
    "count": "non-null count",
}


def stat_words(stat: str) -> str:
    """A query's statistic as the reader knows it: "q_approx" and "q3" are "quantiles"."""
    head = stat.split("_")[0].rstrip("0123456789")
    return _STAT_WORDS.get(head, stat.replace("_", " "))


def short(exc: BaseException) -> str:
    """An error's text on one line, cut at 200 characters (for the debug log)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


@dataclass
class Column:
    """A column being profiled: how it is read and what has been said about it so far."""

    index: int
    name: str
    dtype: dt_.DataType
    kind: ColumnKind
    expr: ir.Column
    notes: list[str] = field(default_factory=list)
    text: str | None = None  # why the column is profiled as its text, if it is
    # figures the backend cannot compute, computed in process (core/profile/local.py):
    # the value its quantiles are taken of, the text its patterns are matched on
    local_quantiles: ir.Value | None = None
    local_text: ir.Value | None = None
    storage_classes: dict[str, int] | None = None
    degradations: list[Degradation] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)  # counted by aggregates.exact_patterns

    @property
    def word(self) -> str:
        return portable.type_text(self.dtype) if self.kind == "other" else type_word(self.dtype, self.kind)

    @property
    def counted(self) -> bool:
        """Whether its values get top values (and, for numbers and dates, histograms)."""
        return self.kind in TOP_KINDS or self.text is not None

    @property
    def computed_locally(self) -> bool:
        return self.local_quantiles is not None or self.local_text is not None

    def skip(self, stats: str, why: str | None = None) -> None:
        self.notes.append(f"{stats}: {why or f'not defined for {self.word}'}")

    def fail(self, stats: str, backend: str, exc: BaseException) -> None:
        """`stats` could not be computed: a note and a degradation, in words (the backend's
        error text, which may quote values, goes to the debug log only)."""
        log.debug("profile of %r: %s failed: %s", self.name, stats, short(exc))
        stats = stat_words(stats)
        reason = f"{stats} could not be computed on {backend} for this {self.word} column"
        if any(d.reason == reason for d in self.degradations):
            return
        self.notes.append(f"{stats}: could not be computed on {backend} for {self.word}")
        self.degradations.append(Degradation(stage="profile", column=self.name, reason=reason))

    def restart_as_text(self, table: ir.Table, why: str) -> None:
        """Forget what was found and profile the column again as its text, for `why`."""
        self.text = why
        self.kind = "string" if self.kind == "string" or self.storage_classes else "other"
        self.expr = portable.as_text(table, self.name)
        self.degradations, self.local_quantiles, self.local_text, self.patterns = [], None, None, []
        self.notes = [f"{AS_TEXT_NOTE}{why}"]


def column_view(table: ir.Table, c: Column) -> tuple[ir.Table, ir.Value]:
    """The table narrowed to column `c` (portable.narrow), and `c` as profiled on it."""
    view = portable.narrow(table, [c.name])
    return view, portable.as_text(view, c.name) if c.text else view[c.name]


def profiled_columns(table: ir.Table, backend_name: str) -> list[Column]:
    """The columns to profile.  A type the backend's functions and Arrow do not take is
    profiled as its text (counts, distinct values, top values); see also
    aggregates.reprofile_as_text."""
    cols = []
    for i, (name, dtype) in enumerate(table.schema().items()):
        c = Column(i, name, dtype, column_kind(dtype), table[name])
        if c.kind == "other" and (why := portable.text_reason(dtype, backend_name)):
            c.text = why
        if c.text:
            c.expr = portable.as_text(table, name)
            c.notes.append(f"{AS_TEXT_NOTE}{c.text}")
        cols.append(c)
    return cols

"""A table's history as the history findings read it: a few numbers of each earlier run's profile.

Every number comes from the runs' stored ``profile.json`` (no scan of the table).  Reading 60
profiles per table on every run would cost 60 reads (60 requests on S3), so the digests of the
last ``HISTORY_RUNS`` runs are kept together in one object in the table's folder
(``history.json``, `CatalogStore.write_history`).  It is only a cache: a run missing from it is
digested from its ``profile.json``, and a lost or unreadable one is rebuilt the same way.
"""

from __future__ import annotations

from functools import lru_cache
from datetime import datetime, timezone
from typing import Any, Optional

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic_core import from_json, to_json
from pydantic_core import to_jsonable_python as as_json

from cataloger_dagster.core.layout import PROFILE, normalize_timestamp
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.core.results import load_result
from cataloger_dagster.core.store import Store

HISTORY_RUNS = 90  # earlier runs a table's findings look back over
DIGEST_VERSION = 1  # a cache of another version is rebuilt, not read
TOP_VALUES = 20  # top values kept per column, for the drift of categories
DETAILED_RUNS = 5  # the latest runs whose histograms, top values and ranges the digest keeps:
# the drift and the renames compare with the latest run kept; of older runs
OLDER_RUNS_KEEP = {"dtype", "kind", "count", "null_fraction", "distinct"}  # only the bands read these


class ColumnPoint(BaseModel):
    """The numbers of one column in one run (what renames.same_column and the drift compare)."""

    dtype: str
    kind: str
    semantic_type: Optional[str] = None
    count: int = 0
    nulls: int = 0
    null_fraction: float = 0.0
    distinct: Optional[int] = None
    min: Any = None
    max: Any = None
    edges: Optional[list[Any]] = None  # the histogram, as stored
    counts: Optional[list[int]] = None
    top: Optional[list[tuple[str, int]]] = None  # value (as text) and count, most frequent first


class RunPoint(BaseModel):
    timestamp: str  # the run folder's
    rows: int
    fingerprint: str
    max_updated: Optional[str] = None
    update_column: Optional[str] = None
    columns: dict[str, ColumnPoint] = Field(default_factory=dict)

    @property
    def moment(self) -> datetime:
        return moment_of(self.timestamp)


_POINTS = TypeAdapter(list[RunPoint])


@lru_cache(maxsize=65536)
def moment_of(timestamp: str) -> datetime:
    """A run folder's time (every finding reads each run's many times: parsed once)."""
    return datetime.fromisoformat(normalize_timestamp(timestamp)).astimezone(timezone.utc)


def point_of(timestamp: str, profile: TableProfile) -> RunPoint:
    """The digest of one run's profile; its values as the stored JSON holds them."""
    columns = {}
    for c in profile.columns:
        histogram, top = c.histogram, c.top_values
        columns[c.name] = ColumnPoint(
            dtype=c.dtype,
            kind=c.kind,
            semantic_type=c.semantic_type,
            count=c.count or 0,
            nulls=c.nulls or 0,
            null_fraction=c.null_fraction or 0.0,
            distinct=c.distinct,
            min=as_json(c.min),
            max=as_json(c.max),
            edges=as_json(histogram.edges) if histogram else None,
            counts=histogram.counts if histogram else None,
            top=[(str(as_json(v.value)), int(v.count or 0)) for v in top[:TOP_VALUES]] if top else None,
        )
    fingerprint = profile.fingerprint
    return RunPoint(
        timestamp=timestamp,
        rows=profile.row_count or 0,
        fingerprint=fingerprint.value,
        max_updated=fingerprint.max_updated,
        update_column=fingerprint.update_column,
        columns=columns,
    )


def _cached(store: Store, prefix: str) -> dict[str, tuple[RunPoint, dict]]:
    """timestamp -> (point, its stored JSON): what was stored is written back as it was, since
    dumping 90 models again would cost more than all the findings."""
    data = store.read_history(prefix)
    if data is None:
        return {}
    try:
        raw = from_json(data)
        if not isinstance(raw, dict) or raw.get("version", DIGEST_VERSION) != DIGEST_VERSION:
            return {}
        stored = raw.get("points") or []
        points = _POINTS.validate_python(stored)
    except (ValidationError, ValueError):
        return {}  # a broken cache is rebuilt from the profiles
    return {p.timestamp: (p, d) for p, d in zip(points, stored)}


def _slim(data: dict) -> dict:
    """A stored point without what only the latest runs need."""
    return {
        **data,
        "columns": {
            name: {k: v for k, v in column.items() if k in OLDER_RUNS_KEEP}
            for name, column in data.get("columns", {}).items()
        },
    }


def _stored(point: RunPoint, detailed: bool) -> dict:
    data = point.model_dump(mode="json", exclude_defaults=True)
    return data if detailed else _slim(data)


def load_history(
    store: Store,
    prefix: str,
    before: str,
    *,
    limit: int = HISTORY_RUNS,
    current: Optional[RunPoint] = None,
    runs: Optional[list[str]] = None,
) -> list[RunPoint]:
    """The digests of the table's last ``limit`` runs before ``before``, oldest first; ``runs``: the
    table's run folders, if the caller listed them already (a request saved on S3).

    Runs the cache lacks are read from their profile.json (a run without one, failed or still
    running, is left out).  The cache is written back, with ``current`` in it, when it changed."""
    runs = [ts for ts in (store.list_runs(prefix) if runs is None else runs) if ts < before][-limit:]
    cached = _cached(store, prefix)
    points, stored, read = [], {}, False
    point: RunPoint | None
    for ts in runs:
        if ts in cached:
            point, stored[ts] = cached[ts]
        else:
            try:
                profile = load_result(store, prefix, ts, PROFILE, TableProfile)
                point = point_of(ts, profile) if profile is not None else None
            except (RuntimeError, ValueError, KeyError, TypeError):
                # an earlier run's damaged profile (the store's error is a RuntimeError) is no history:
                # it must not fail this run, whose own profile is sound
                point = None
            if point is None:
                continue
            read = True
        points.append(point)
    kept = [*points, current] if current is not None else points
    if read or (current is not None and current.timestamp not in cached) or len(cached) > len(kept) + 1:
        # one more than the window: this run's window again (a re-executed run), or the next run's
        window = kept[-(limit + 1) :]
        detailed = len(window) - DETAILED_RUNS
        # only the runs the cache kept in detail can need slimming: the older ones were slimmed before
        was_detailed = set(list(cached)[-DETAILED_RUNS:])
        out = []
        for n, point in enumerate(window):
            keep = stored.get(point.timestamp)
            if keep is None:
                out.append(_stored(point, n >= detailed))
            else:
                out.append(_slim(keep) if n < detailed and point.timestamp in was_detailed else keep)
        store.write_history(prefix, to_json({"version": DIGEST_VERSION, "points": out}))
    return points

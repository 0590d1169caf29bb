"""Database values as a profile holds them: JSON-safe (NaN is None, bytes base64, dates ISO
text), top values restored from the text the UNION query gives, dates to and from seconds
since 1970, and the table's sample rows."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import uuid
from typing import Any

import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.models import TEMPORAL_KINDS, Degradation
from cataloger_dagster.core.profile.kinds import Column
from cataloger_dagster.core.profile.runner import Runner


def json_safe(v: Any) -> Any:
    """Turn a database value into something json.dumps accepts, NaN -> None."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, str):
        return v
    if isinstance(v, decimal.Decimal):
        exponent = v.as_tuple().exponent  # a letter for NaN and infinity, which is_finite() sets aside
        return (
            None
            if not v.is_finite()
            else (int(v) if v == v.to_integral_value() and isinstance(exponent, int) and exponent >= 0 else float(v))
        )
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        if hasattr(v, "to_pydatetime") and str(v) == "NaT":
            return None
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "base64:" + base64.b64encode(bytes(v)).decode()
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [json_safe(x) for x in v]
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return json_safe(v.tolist())
    if type(v).__name__ in ("NaTType", "NAType"):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def from_text(kind: str, s: Any) -> Any:
    """Top values come back as text (one UNION for all types): restore the type."""
    if s is None:
        return None
    try:
        if kind == "integer":
            return int(s)
        if kind in ("float", "decimal"):
            return json_safe(float(s))
        if kind == "boolean":
            return str(s).lower() in ("true", "1", "t")
        if kind in TEMPORAL_KINDS:
            return iso(s, kind)
    except (TypeError, ValueError):
        pass
    return str(s)


def iso(v: Any, kind: str) -> str | None:
    """A date or timestamp as ISO text (a date's day only)."""
    import pandas as pd

    if v is None:
        return None
    ts = pd.Timestamp(v)
    if ts is pd.NaT:
        return None
    return ts.date().isoformat() if kind == "date" else ts.isoformat()


def float_list(text: str | None) -> list[float | None] | None:
    """A list the database cast to text, e.g. '[1.5, 2.0, NULL]'."""
    if text is None:
        return None
    out: list[float | None] = []
    for part in text.strip("[] ").split(","):
        try:
            out.append(float(part))
        except ValueError:
            out.append(None)
    return out


def epoch_py(v: Any) -> float | None:
    """Seconds since 1970 of a date or timestamp (naive ones read as UTC, as
    the database's epoch functions do)."""
    import pandas as pd

    if v is None:
        return None
    try:
        ts = pd.Timestamp(v)
    except (TypeError, ValueError):
        return None
    if ts is pd.NaT:
        return None
    return (ts if ts.tzinfo else ts.tz_localize("UTC")).timestamp()


def from_epoch(seconds: float | None, c: Column) -> str | None:
    """Seconds since 1970 as column `c`'s date or timestamp, in ISO text."""
    if seconds is None:
        return None
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)
    if c.kind == "date":
        return moment.date().isoformat()
    if c.dtype.timezone is None:
        moment = moment.replace(tzinfo=None)
    return moment.isoformat()


def sample_rows(table: ir.Table, cols: list[Column], size: int, runner: Runner) -> list[dict[str, Any]]:
    """The table's first `size` rows, JSON-safe; what Arrow cannot carry is shown as text
    or left out, with a note (and a degradation when left out)."""
    if size <= 0:
        return []
    runner.queries += 1
    known = {c.name: c.text for c in cols if c.storage_classes and c.text is not None}
    data, reasons = portable.read_arrow(table, limit=size, known=known)
    for c in cols:
        why = reasons.get(c.name)
        if why == portable.LEFT_OUT:
            c.degradations.append(Degradation(stage="profile", column=c.name, reason=f"sample rows: {why}"))
            c.notes.append(f"sample rows: {why}")
        elif why and not c.text:
            c.notes.append(f"sample rows: shown as text, {why}")
    rows = data.to_pylist()
    text = {name for name, why in reasons.items() if why}
    maps = {name for name, dtype in table.schema().items() if dtype.is_map() and name not in text}
    for r in rows:
        for name in maps:  # Arrow gives maps as (key, value) pairs
            if isinstance(r[name], list):
                r[name] = {str(k): v for k, v in r[name]}
    return [{k: json_safe(v) for k, v in r.items()} for r in rows]

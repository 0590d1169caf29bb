"""How the pages show what a value is: an identifier without thousands separators, a moment as
"2 hours ago" with its exact value on hover.

A moment is said relative to the page's own generation time, which the renderer passes in, so
that the same run renders the same page whenever it is rendered."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from markupsafe import Markup

from cataloger_dagster.core import text
from cataloger_dagster.core.layout import normalize_timestamp
from cataloger_dagster.core.grammar import count_noun
from cataloger_dagster.core.models import ColumnProfile, DatasetUnderstandingModel, TableProfile

# the last word of a name that says the column identifies or codes something, not measures it
IDENTIFIER_WORDS = {
    "id",
    "ids",
    "key",
    "code",
    "uuid",
    "sku",
    "no",
    "nr",
    "num",
    "number",
    "ref",
    "zip",
    "postcode",
    "year",
}
_ROLE_WORDS = re.compile(r"\b(identifier|identifies|key|code)\b", re.I)
_UNITS = (("week", 7 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60))


def identifier_columns(profile: TableProfile, understanding: DatasetUnderstandingModel | None = None) -> set[str]:
    """The integer columns whose values name a thing rather than measure it (ids, keys, codes,
    years): their name's last word says so, or the understanding's description of them does."""
    described = {c.name: c.description for c in (understanding.columns if understanding else [])}
    return {c.name for c in profile.columns if _is_identifier(c, described.get(c.name) or "")}


def _is_identifier(column: ColumnProfile, description: str) -> bool:
    if column.kind != "integer":
        return False
    words = text.words(column.name)
    return bool(words and words[-1] in IDENTIFIER_WORDS) or bool(_ROLE_WORDS.search(description))


def generation_time(now: datetime | None = None) -> datetime:
    """A page's generation time, in UTC: ``now`` as given, else the current time."""
    now = now or datetime.now(timezone.utc)
    return now if now.tzinfo else now.replace(tzinfo=timezone.utc)


def run_moment(timestamp: str) -> datetime | None:
    """A run's timestamp as the moment its pages are generated at (None if it is no timestamp):
    the same run's pages then say the same "2 hours ago" whenever they are rendered."""
    try:
        return generation_time(datetime.fromisoformat(normalize_timestamp(timestamp)))
    except ValueError:
        return None


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def ago(value: Any, now: datetime) -> str:
    """``2 hours ago``, ``in 3 days``, ``just now``: a moment relative to ``now``, in its largest
    whole unit, rounded."""
    moment = _moment(value)
    if moment is None:
        return str(value or "")
    now = now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    seconds = (now - moment).total_seconds()
    months = _whole_months(*sorted((moment, now)))  # on the calendar, so years and leap days count right
    if months >= 12:
        return _said(round(months / 12), "year", seconds)
    if months >= 1:
        return _said(months, "month", seconds)
    for unit, size in _UNITS:
        if abs(seconds) >= size:
            return _said(round(abs(seconds) / size), unit, seconds)  # 1 h 59 min is "2 hours"
    return "just now"


def _said(n: int, unit: str, seconds: float) -> str:
    return f"{count_noun(n, unit)} ago" if seconds > 0 else f"in {count_noun(n, unit)}"


def _whole_months(earlier: datetime, later: datetime) -> int:
    earlier = earlier.astimezone(timezone.utc)
    later = later.astimezone(timezone.utc)
    months = (later.year - earlier.year) * 12 + later.month - earlier.month
    return months - 1 if (later.day, later.time()) < (earlier.day, earlier.time()) else months


def exact(value: Any) -> str:
    """A moment in full, to the second, in UTC: ``2026-11-27 10:22:03 UTC``."""
    moment = _moment(value)
    if moment is None:
        return str(value or "")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def time_ago(value: Any, now: datetime) -> Markup:
    """``<time datetime="…" title="exact">2 hours ago</time>``; a value that is no moment as text."""
    moment = _moment(value)
    if moment is None:
        return Markup("{}").format(value if value not in (None, "") else "—")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"), exact(moment), ago(moment, now)
    )

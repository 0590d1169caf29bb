"""The store's layout: folders, file names and timestamps, for every backend.

Layout (docs/design.md, "The store")::

    <store>/<database>/<table>/<timestamp>/<files>    one folder per run
    <store>/<database>/<table>/timelapse.html         every run of the table, replaced each run
    <store>/<database>/<table>/reviews/<entry>.json   the review log, one object per entry
    <store>/<database>/<table>/writeback/<entry>.json the comments `cataloger writeback` wrote
    <store>/<database>/catalog.json                   the catalog's sources (identity.py), written first
    <store>/<database>/index.html                     the one file rewritten
    <store>/<database>/index_history/<timestamp>.html every index ever written

A store prefix is ``"<database>/<table>"`` as `table_prefix` makes it: every
database or table name becomes a folder name through `store_name`, the one
mapping from names to paths and keys (both backends, the index links, the
Dagster IO manager).  Timestamps are ISO-8601 UTC with microseconds
(``2026-11-22T10:00:00.123456Z``) so that they sort as text.

The artifacts of one run folder have the names below; they are part of the
store's public layout, and every stage reads and writes them by these names.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta, timezone
from pathlib import PurePath
from typing import Any, Optional

from pydantic import BaseModel

# --------------------------------------------------------------------------
# the artifacts of one run folder
# --------------------------------------------------------------------------

PROFILE = "profile.json"  # table_profile
UNDERSTANDING = "understanding.json"  # table_understanding
ISSUES = "issues.json"  # quality_issues
KEYS = "keys.json"  # quality_issues: what the other tables' reference searches read of the profile
INVESTIGATIONS = "investigations.json"  # investigations
SCRIPT = "catalog_script.py"  # investigations: the session script
LATEST_WINDOW = 10  # the next run picks from the table's last 10 scripts
SUMMARY_SCRIPT = "summary_script.py"  # recent_summary
RECENT_SUMMARY = "recent_summary.html"  # recent_summary
CATALOG_PAGE = "catalog.html"  # catalog_page
FIXES = "fixes"  # quality_issues: the smart-fix scripts, fixes/<name>
RUN_SUMMARY = "run_summary.json"  # catalog_page: the run's few numbers, for the timelapse
TIMELAPSE = "timelapse.html"  # catalog_page: in the table's folder, beside the runs
GUARDRAILS = "guardrails.json"  # catalog_page: the guardrail suite built from the run
# catalog_page: the suite in each tool's format, offered for download on the page (core/guardrails/downloads.py)
GUARDRAILS_SQL = "guardrails.sql"
GUARDRAILS_SODA = "guardrails.soda.yml"
GUARDRAILS_DBT = "guardrails.dbt.yml"
GUARDRAILS_GX = "guardrails.gx_suite.json"
HISTORY = "history.json"  # quality_issues: in the table's folder, a digest of its runs' profiles

RUN_FILE = "run.json"
INDEX_FILE = "index.html"
CATALOG_FILE = "catalog.json"  # reserved: the sources whose results the catalog holds (resources/store/identity.py)
INDEX_HISTORY = "index_history"  # reserved: never listed as a table
CAPSULES = "mcp_capsules"  # reserved: the MCP server's run capsules, <database>/mcp_capsules/<session>/
ALERTS = "alerts"  # reserved: alert_sensor's log of deliveries, <database>/alerts/
DATABASE_RUNS = "database_runs"  # reserved: `cataloger run`'s log of its runs, <database>/database_runs/ (resume)
TABLE_FACTS = "table_facts"  # reserved: each table run's facts for the other tables' runs (database_log.py)
REVIEW_LOG = "review_log"  # reserved: every review of the database, for learned precision (database_log.py)
VALUE_KEY = "value.key"  # reserved: the key of the `hash` policy when none is set (resources/store/base.py)
REVIEWS_FOLDER = "reviews"  # <table>/reviews/<timestamp>-<id>.json: the table's own review log
WRITEBACK_FOLDER = "writeback"  # <table>/writeback/<timestamp>-<id>.json: the comments the catalog wrote
GUARDRAIL_CHECKS = "guardrail_checks"  # <table>/guardrail_checks/<timestamp>-<id>.json: each run of its suite

_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_TS_EXAMPLE = "2026-11-22T10:00:00.123456Z"


class ScriptRecord(BaseModel):
    timestamp: str
    code: str
    metrics: Optional[dict[str, Any]] = None
    uri: str


# --------------------------------------------------------------------------
# names and timestamps
# --------------------------------------------------------------------------


def format_timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware (UTC)")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_timestamp() -> str:
    return format_timestamp(datetime.now(timezone.utc))


def normalize_timestamp(timestamp: str) -> str:
    """Any ISO-8601 instant with a zone -> the canonical, text-sortable form.

    Scripts written by hand or by other tools carry ``2024-01-15T10:00:00Z``; mixing that with microsecond
    stamps would break text ordering ('Z' sorts after '.'), so every stamp
    is stored in one form.
    """
    if isinstance(timestamp, str) and _TS_RE.match(timestamp):
        return timestamp
    try:
        moment = datetime.fromisoformat(str(timestamp))
    except ValueError:
        raise ValueError(f"timestamp {timestamp!r} is not ISO-8601; use UTC like {_TS_EXAMPLE}") from None
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {timestamp!r} has no time zone; use UTC like {_TS_EXAMPLE}")
    return format_timestamp(moment)


def parse_timestamp(timestamp: str) -> datetime:
    """The instant of a canonical stamp (`format_timestamp`'s form)."""
    return datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def _next_timestamp(timestamp: str) -> str:
    return format_timestamp(parse_timestamp(timestamp) + timedelta(microseconds=1))


# an entry of an append-only log (reviews, database logs): its writer's stamp and a random id
ENTRY_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z-[0-9a-f]{12}\.json\Z")


# Names kept exactly as they are, so that stores written before `store_name`
# existed keep working: letters, digits, _ . - not starting with '.' or '-'.
_PLAIN_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
# Every segment `store_name` makes: URL-unreserved characters only, so that a
# segment is also a literal URL path segment (index links) and S3 key part.
_SEGMENT_RE = re.compile(r"[A-Za-z0-9_~][A-Za-z0-9_.~-]*\Z")
_ESCAPE_RE = re.compile(r"~([0-9A-F]{2})")
HASH_MARK = "~~"  # never made by escaping: every other '~' starts an escape
HASH_LENGTH = 16  # hex digits; 64 bits, so no one can craft a name to land in another's folder
MAX_SEGMENT = 160  # well under the 255 bytes a file name may have, with room for temp names
# What a database's folder holds besides its tables; compared case-insensitively
# because a case-insensitive file system would confuse 'INDEX.HTML' with the index.
_RESERVED = {
    INDEX_FILE,
    CATALOG_FILE,
    INDEX_HISTORY,
    CAPSULES,
    ALERTS,
    DATABASE_RUNS,
    TABLE_FACTS,
    REVIEW_LOG,
    VALUE_KEY,
}


def store_name(name: str) -> str:
    """The folder (path segment, S3 key part) of a database or table name.

    Plain names (letters, digits, ``_ . -``, not starting with ``.`` or ``-``)
    stay as they are.  Other names are escaped reversibly, each other byte of
    their UTF-8 as ``~XX`` (``a/b`` -> ``a~2Fb``, ``index.html`` ->
    ``index~2Ehtml``, ``..`` -> ``~2E.``); a result longer than
    `MAX_SEGMENT` is cut and ends in ``~~`` and a hash of the whole name.
    Distinct names always get distinct segments (up to a hash collision of
    long names), and no segment is '.', '..', reserved, or holds a '/'.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"invalid name {name!r}: database and table names must be non-empty text")
    reserved = name.casefold() in _RESERVED
    if len(name) <= MAX_SEGMENT and not reserved and _PLAIN_RE.match(name):
        return name
    data = name.encode("utf-8", "surrogatepass")
    segment = "".join(
        chr(byte) if _kept(byte, first=i == 0, reserved=reserved) else f"~{byte:02X}" for i, byte in enumerate(data)
    )
    if reserved and segment.casefold() in _RESERVED:
        # a reserved name of letters only ('alerts') has nothing to escape: its first letter is
        segment = f"~{data[0]:02X}{segment[1:]}"
    if len(segment) <= MAX_SEGMENT:
        return segment
    head = segment[: MAX_SEGMENT - len(HASH_MARK) - HASH_LENGTH]
    head = re.sub(r"~[0-9A-F]?\Z", "", head)  # never cut an escape in two
    return f"{head}{HASH_MARK}{hashlib.sha256(data).hexdigest()[:HASH_LENGTH]}"


def _kept(byte: int, *, first: bool, reserved: bool) -> bool:
    char = chr(byte)
    if byte >= 128 or not (char.isalnum() or char in "_.-"):
        return False
    if first and char in ".-":
        return False
    return char.isalnum() or not reserved


def name_of_folder(segment: str) -> str | None:
    """The name whose `store_name` is ``segment``; None when the segment holds a
    hash (see `CatalogStore.list_tables`) or is no segment `store_name` makes."""
    if not isinstance(segment, str) or HASH_MARK in segment:
        return None
    data = bytearray()
    position = 0
    for escape in _ESCAPE_RE.finditer(segment):
        data += segment[position : escape.start()].encode("ascii", "replace")
        data.append(int(escape.group(1), 16))
        position = escape.end()
    data += segment[position:].encode("ascii", "replace")
    try:
        name = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return name if name and store_name(name) == segment else None


def _check_segment(part: str, what: str) -> str:
    if (
        not isinstance(part, str)
        or len(part) > MAX_SEGMENT
        or not _SEGMENT_RE.match(part)
        or part.casefold() in _RESERVED
    ):
        raise ValueError(
            f"invalid {what} {part!r} for the store: database and table names "
            "become folders through store_name() (use table_prefix(database, table))"
        )
    return part


def _check_prefix(prefix: str) -> str:
    parts = prefix.strip("/").split("/") if isinstance(prefix, str) else []
    if len(parts) != 2:
        raise ValueError(f"invalid prefix {prefix!r}: expected '<database>/<table>' as table_prefix makes it")
    return "/".join(_check_segment(p, "prefix component") for p in parts)


# the only folders a run folder holds: a file name may start with one of them and a '/'
RUN_SUBFOLDERS = (FIXES,)


def _check_filename(filename: str) -> str:
    folder, slash, name = filename.partition("/") if isinstance(filename, str) else ("", "", filename)
    if not slash:
        folder, name = "", folder
    elif folder not in RUN_SUBFOLDERS:
        raise ValueError(
            f"invalid file name {filename!r}: a run folder holds no folder {folder!r} "
            f"(only {', '.join(RUN_SUBFOLDERS)})"
        )
    if not isinstance(name, str) or not name or name.startswith(".") or "/" in name or "\\" in name or "\x00" in name:
        # dot-files are the local backend's temporary files
        raise ValueError(
            f"invalid file name {filename!r}: it must be a non-empty name without '/', "
            "'\\' or NUL, not starting with '.'"
        )
    return filename


def fix_filename(issue_id: str, option: str, language: str = "sql") -> str:
    """The store path of a smart-fix script in its run folder, safe for any issue id or option:
    ``fixes/<issue id>.<option>.sql``, escaped as `store_name` escapes folder names."""
    suffix = {"sql": "sql", "python": "py"}[language]
    return f"{FIXES}/{store_name(f'{issue_id}.{option}')}.{suffix}"


def table_prefix(database: str, table: str) -> str:
    """The store prefix of a table, safe for any database or table name."""
    return f"{store_name(database)}/{store_name(table)}"


def metrics_filename(filename: str) -> str:
    """``catalog_script.py`` -> ``catalog_script.metrics.json``."""
    return f"{PurePath(filename).stem}.metrics.json"

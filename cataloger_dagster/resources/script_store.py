"""The script store: every run's scripts, JSON results and HTML pages.

Layout (DESIGN.md)::

    <store>/<database>/<table>/<timestamp>/<files>    one folder per run
    <store>/<database>/index.html                     the one file rewritten
    <store>/<database>/index_history/<timestamp>.html every index ever written

``prefix`` in this API is ``"<database>/<table>"`` as `table_prefix` makes it:
every database or table name becomes a folder name through `store_name`, the
one mapping from names to paths and keys (both backends, the index links, the
Dagster IO manager).  Timestamps are ISO-8601 UTC with microseconds
(``2026-11-22T10:00:00.123456Z``) so that they sort as text.

Nothing in a run folder is ever overwritten: every write is exclusive
(`ArtifactExistsError`), and `open_run` claims a fresh folder per Dagster run
by creating its ``run.json`` exclusively.  Only ``index.html`` is replaced,
and each version is first kept under ``index_history/`` (written, not copied,
so that two concurrent index writers cannot lose a version between them).

The base class holds all the logic over a handful of storage primitives;
`LocalScriptStore` (here) and `S3ScriptStore` (script_store_s3.py, re-exported
here) implement only those primitives.
"""

from __future__ import annotations

import abc
import hashlib
import json
import os
import re
import threading
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Callable, Optional
from urllib.parse import unquote, urlparse

import dagster as dg
from pydantic import BaseModel, Field, PrivateAttr

from cataloger_dagster.ranking import rank_scripts

if TYPE_CHECKING:
    from dagster_aws.s3 import S3Resource

__all__ = [
    "ArtifactExistsError",
    "LocalScriptStore",
    "S3ScriptStore",
    "ScriptRecord",
    "ScriptStore",
    "ScriptStoreError",
    "metrics_filename",
    "name_of_folder",
    "new_timestamp",
    "normalize_timestamp",
    "script_store_from_url",
    "store_name",
    "table_prefix",
]

RUN_FILE = "run.json"
INDEX_FILE = "index.html"
INDEX_HISTORY = "index_history"   # reserved: never listed as a table
LATEST_WINDOW = 10                # seed 000: "searches the last 10 timestamps"
RUN_LOOKBACK = 32                 # run folders searched for an open run's id

_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_TS_EXAMPLE = "2026-11-22T10:00:00.123456Z"


class ScriptStoreError(RuntimeError):
    """The store cannot be used as configured (missing bucket, unwritable folder...)."""


class ArtifactExistsError(FileExistsError):
    """A write would replace a file of an existing run."""

    def __init__(self, path: str):
        super().__init__(
            f"{path} already exists; runs are never overwritten "
            "(open a new run with open_run, or pick another file name)"
        )
        self.path = path


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

    Seed 000 writes ``2024-01-15T10:00:00Z``; mixing that with microsecond
    stamps would break text ordering ('Z' sorts after '.'), so every stamp
    is stored in one form.
    """
    if isinstance(timestamp, str) and _TS_RE.match(timestamp):
        return timestamp
    try:
        moment = datetime.fromisoformat(str(timestamp))
    except ValueError:
        raise ValueError(
            f"timestamp {timestamp!r} is not ISO-8601; use UTC like {_TS_EXAMPLE}"
        ) from None
    if moment.tzinfo is None:
        raise ValueError(
            f"timestamp {timestamp!r} has no time zone; use UTC like {_TS_EXAMPLE}"
        )
    return format_timestamp(moment)


def _next_timestamp(timestamp: str) -> str:
    moment = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return format_timestamp(moment + timedelta(microseconds=1))


# Names kept exactly as they are, so that stores written before `store_name`
# existed keep working: letters, digits, _ . - not starting with '.' or '-'.
_PLAIN_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
# Every segment `store_name` makes: URL-unreserved characters only, so that a
# segment is also a literal URL path segment (index links) and S3 key part.
_SEGMENT_RE = re.compile(r"[A-Za-z0-9_~][A-Za-z0-9_.~-]*\Z")
_ESCAPE_RE = re.compile(r"~([0-9A-F]{2})")
HASH_MARK = "~~"          # never made by escaping: every other '~' starts an escape
HASH_LENGTH = 16          # hex digits; 64 bits, so no one can craft a name to land in another's folder
MAX_SEGMENT = 160         # well under the 255 bytes a file name may have, with room for temp names
# What a database's folder holds besides its tables; compared case-insensitively
# because a case-insensitive file system would confuse 'INDEX.HTML' with the index.
_RESERVED = {INDEX_FILE, INDEX_HISTORY}


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
        chr(byte) if _kept(byte, first=i == 0, reserved=reserved) else f"~{byte:02X}"
        for i, byte in enumerate(data)
    )
    if len(segment) <= MAX_SEGMENT:
        return segment
    head = segment[:MAX_SEGMENT - len(HASH_MARK) - HASH_LENGTH]
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
    hash (see `ScriptStore.list_tables`) or is no segment `store_name` makes."""
    if not isinstance(segment, str) or HASH_MARK in segment:
        return None
    data = bytearray()
    position = 0
    for escape in _ESCAPE_RE.finditer(segment):
        data += segment[position:escape.start()].encode("ascii", "replace")
        data.append(int(escape.group(1), 16))
        position = escape.end()
    data += segment[position:].encode("ascii", "replace")
    try:
        name = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return name if name and store_name(name) == segment else None


def _check_segment(part: str, what: str) -> str:
    if not isinstance(part, str) or len(part) > MAX_SEGMENT or not _SEGMENT_RE.match(part) \
            or part.casefold() in _RESERVED:
        raise ValueError(
            f"invalid {what} {part!r} for the script store: database and table names "
            "become folders through store_name() (use table_prefix(database, table))"
        )
    return part


def _check_prefix(prefix: str) -> str:
    parts = prefix.strip("/").split("/") if isinstance(prefix, str) else []
    if len(parts) != 2:
        raise ValueError(
            f"invalid prefix {prefix!r}: expected '<database>/<table>' as table_prefix makes it")
    return "/".join(_check_segment(p, "prefix component") for p in parts)


def _check_filename(filename: str) -> str:
    if not isinstance(filename, str) or not filename or filename.startswith(".") \
            or "/" in filename or "\\" in filename or "\x00" in filename:
        # dot-files are the local backend's temporary files
        raise ValueError(
            f"invalid file name {filename!r}: it must be a non-empty name without '/', "
            "'\\' or NUL, not starting with '.'"
        )
    return filename


def table_prefix(database: str, table: str) -> str:
    """The store prefix of a table, safe for any database or table name."""
    return f"{store_name(database)}/{store_name(table)}"


def metrics_filename(filename: str) -> str:
    """``catalog_script.py`` -> ``catalog_script.metrics.json``."""
    return f"{PurePath(filename).stem}.metrics.json"


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (Decimal, uuid.UUID, PurePath)):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _to_bytes(content: str | bytes) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    raise TypeError(f"content must be str or bytes, not {type(content).__name__}")


# Striped locks for threads of this process: bounded memory however many runs.
# An "open" lock may be held while taking a "claim" lock, never the reverse.
_LOCKS = {kind: [threading.Lock() for _ in range(64)] for kind in ("open", "claim")}


def _process_lock(kind: str, *key: str) -> threading.Lock:
    stripes = _LOCKS[kind]
    return stripes[hash(key) % len(stripes)]


# --------------------------------------------------------------------------
# the store
# --------------------------------------------------------------------------


class ScriptStore(dg.ConfigurableResource, abc.ABC):
    """Seed 000's script storage plus run folders, artifacts and ranking."""

    # run ids already resolved by this instance; a claimed folder never changes
    _runs_seen: dict = PrivateAttr(default_factory=dict)

    # ---- storage primitives (keys are '/'-joined paths below the store root)

    @abc.abstractmethod
    def _read(self, key: str) -> bytes | None: ...

    @abc.abstractmethod
    def _write_new(self, key: str, data: bytes) -> None:
        """Create ``key``; raise ArtifactExistsError if it exists."""

    @abc.abstractmethod
    def _replace(self, key: str, data: bytes) -> None: ...

    @abc.abstractmethod
    def _list(self, key: str) -> tuple[list[str], list[str]]:
        """(sub-folder names, file names) directly under ``key``."""

    @abc.abstractmethod
    def _claim(self, folder: str, run_file: bytes) -> bool:
        """Create ``folder`` with its run.json; False if the folder is taken."""

    @abc.abstractmethod
    def _release(self, folder: str) -> None:
        """Undo our own `_claim` (only ever called right after it)."""

    @abc.abstractmethod
    def _key_uri(self, key: str) -> str: ...

    @abc.abstractmethod
    def describe(self) -> str:
        """Where the store is, for people; never contains credentials."""

    # ---- locations

    def uri(self, prefix: str, timestamp: str | None = None, filename: str | None = None) -> str:
        parts = [_check_prefix(prefix)]
        if timestamp is not None:
            parts.append(normalize_timestamp(timestamp))
        if filename is not None:
            parts.append(_check_filename(filename))
        return self._key_uri("/".join(parts))

    @staticmethod
    def _file_key(prefix: str, timestamp: str, filename: str) -> str:
        return f"{_check_prefix(prefix)}/{normalize_timestamp(timestamp)}/{_check_filename(filename)}"

    # ---- listing

    def list_runs(self, prefix: str) -> list[str]:
        """Timestamps of the table's run folders, oldest first."""
        folders, _ = self._list(_check_prefix(prefix))
        return sorted(f for f in folders if _TS_RE.match(f))

    def list_tables(self, database: str) -> list[str]:
        """The names of the tables of ``database`` (a name, not a segment) with a folder."""
        base = store_name(database)
        folders, _ = self._list(base)
        names = []
        for folder in folders:
            name = name_of_folder(folder)
            if name is None and HASH_MARK in folder and _SEGMENT_RE.match(folder):
                name = self._recorded_table(f"{base}/{folder}")
            # folders of no table (the index history, foreign or legacy ones) are left out
            if name is not None and store_name(name) == folder:
                names.append(name)
        return sorted(names)

    def _recorded_table(self, prefix: str) -> str | None:
        """A hashed folder's table name, as `open_run` recorded it in a run.json."""
        for timestamp in reversed(self.list_runs(prefix)[-RUN_LOOKBACK:]):
            info = self.run_info(prefix, timestamp)
            if isinstance(info, dict) and isinstance(info.get("table"), str):
                return info["table"]
        return None

    # ---- runs

    def open_run(self, prefix: str, run_id: str, table: str | None = None) -> str:
        """The timestamp folder of ``run_id`` for this table, claiming a new
        one on first use, so that all assets of one Dagster run write into
        one folder and no two runs ever share one.  ``table``, the table's
        name, is recorded in the run.json (`list_tables` needs it for names
        too long to be escaped whole)."""
        prefix = _check_prefix(prefix)
        if not isinstance(run_id, str) or not run_id:
            raise ValueError(f"run_id must be a non-empty string, not {run_id!r}")
        if table is not None and store_name(table) != prefix.split("/")[1]:
            raise ValueError(f"table {table!r} does not live under prefix {prefix!r}; "
                             "use table_prefix(database, table)")
        cached = self._runs_seen.get((prefix, run_id))
        if cached:
            return cached
        with _process_lock("open", self._key_uri(prefix), run_id):
            claimed = self._runs_claimed_by(prefix, run_id)
            if claimed:
                timestamp = claimed[0]
            else:
                timestamp = self._claim_new_run(prefix, run_id, table)
                # Steps of one run in two processes may both claim; they then
                # agree on the earliest folder and withdraw the other claim.
                # (Residual race: a claimant that picked an earlier stamp but
                # wrote it after the other had looked; documented, not closed.)
                claimed = self._runs_claimed_by(prefix, run_id)
                if claimed and claimed[0] != timestamp:
                    self._release(f"{prefix}/{timestamp}")
                    timestamp = claimed[0]
        self._runs_seen[(prefix, run_id)] = timestamp
        return timestamp

    def run_info(self, prefix: str, timestamp: str) -> dict | None:
        """The run.json of a run folder ({"run_id", "created", "table"}), if any."""
        return self.read_json(prefix, timestamp, RUN_FILE)

    def _runs_claimed_by(self, prefix: str, run_id: str) -> list[str]:
        found = []
        for timestamp in self.list_runs(prefix)[-RUN_LOOKBACK:]:
            info = self.read_json(prefix, timestamp, RUN_FILE)
            if isinstance(info, dict) and info.get("run_id") == run_id:
                found.append(timestamp)
        return found

    def _claim_new_run(self, prefix: str, run_id: str, table: str | None) -> str:
        runs = self.list_runs(prefix)
        timestamp = new_timestamp()
        if runs and timestamp <= runs[-1]:
            # keeps "newest folder = latest run" true despite clock steps
            timestamp = _next_timestamp(runs[-1])
        info = {"run_id": run_id, "created": new_timestamp()}
        if table is not None:
            info["table"] = table
        run_file = json.dumps(info).encode()
        for _ in range(10_000):
            if self._claim(f"{prefix}/{timestamp}", run_file):
                return timestamp
            timestamp = _next_timestamp(timestamp)
        raise ScriptStoreError(f"could not claim a run folder under {self.uri(prefix)}")

    # ---- artifacts

    def write_artifact(self, prefix: str, timestamp: str, filename: str,
                       content: str | bytes) -> str:
        key = self._file_key(prefix, timestamp, filename)
        self._write_new(key, _to_bytes(content))
        return self._key_uri(key)

    def read_artifact(self, prefix: str, timestamp: str, filename: str) -> bytes | None:
        return self._read(self._file_key(prefix, timestamp, filename))

    def write_json(self, prefix: str, timestamp: str, filename: str, data: Any) -> str:
        if isinstance(data, BaseModel):
            text = data.model_dump_json(indent=2)
        else:
            text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_default)
        return self.write_artifact(prefix, timestamp, filename, text)

    def read_json(self, prefix: str, timestamp: str, filename: str) -> Any | None:
        data = self.read_artifact(prefix, timestamp, filename)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as e:
            raise ScriptStoreError(
                f"{self.uri(prefix, timestamp, filename)} is not valid JSON: {e}"
            ) from None

    def write_index(self, database: str, html: str) -> str:
        database = store_name(database)
        data = _to_bytes(html)
        timestamp = new_timestamp()
        while True:
            try:
                self._write_new(f"{database}/{INDEX_HISTORY}/{timestamp}.html", data)
                break
            except ArtifactExistsError:
                timestamp = _next_timestamp(timestamp)
        key = f"{database}/{INDEX_FILE}"
        self._replace(key, data)
        return self._key_uri(key)

    def read_index(self, database: str) -> str | None:
        data = self._read(f"{store_name(database)}/{INDEX_FILE}")
        return None if data is None else data.decode("utf-8")

    def index_uri(self, database: str) -> str:
        return self._key_uri(f"{store_name(database)}/{INDEX_FILE}")

    # ---- scripts (seed 000)

    def write_script(self, prefix: str, timestamp: str, filename: str, content: str) -> str:
        return self.write_artifact(prefix, timestamp, filename, content)

    def read_script(self, prefix: str, timestamp: str, filename: str) -> str | None:
        data = self.read_artifact(prefix, timestamp, filename)
        return None if data is None else data.decode("utf-8")

    def get_latest_script(self, prefix: str, filename: str) -> tuple[str, str] | None:
        """(timestamp, code) of the newest of the last 10 runs holding ``filename``."""
        for timestamp in reversed(self.list_runs(prefix)[-LATEST_WINDOW:]):
            code = self.read_script(prefix, timestamp, filename)
            if code is not None:
                return timestamp, code
        return None

    def write_script_with_metrics(self, prefix: str, timestamp: str, filename: str,
                                  content: str, metrics: dict) -> str:
        if not isinstance(metrics, dict):
            raise TypeError(f"metrics must be a dict, not {type(metrics).__name__}")
        uri = self.write_script(prefix, timestamp, filename, content)
        # after the script, so a reader never finds metrics without their script
        self.write_json(prefix, timestamp, metrics_filename(filename), metrics)
        return uri

    def read_metrics(self, prefix: str, timestamp: str, filename: str) -> dict | None:
        metrics = self.read_json(prefix, timestamp, metrics_filename(filename))
        return metrics if isinstance(metrics, dict) else None

    def list_scripts(self, prefix: str, filename: str, limit: int = LATEST_WINDOW) -> list[ScriptRecord]:
        """The last ``limit`` scripts, newest first.  Runs without one take no place, so
        that the run asking (its own folder holds no script yet) and `cataloger scripts`
        between runs see the same scripts."""
        records: list[ScriptRecord] = []
        for timestamp in reversed(self.list_runs(prefix)):
            if len(records) >= limit:
                break
            code = self.read_script(prefix, timestamp, filename)
            if code is None:
                continue
            records.append(ScriptRecord(
                timestamp=timestamp, code=code,
                metrics=self.read_metrics(prefix, timestamp, filename),
                uri=self.uri(prefix, timestamp, filename),
            ))
        return records

    def best_script(self, prefix: str, filename: str, *, limit: int = LATEST_WINDOW,
                    key: Callable[[ScriptRecord], Any] | None = None,
                    current_ids: set[str] | None = None,
                    schema_hash: str | None = None) -> ScriptRecord | None:
        """The best of the last ``limit`` scripts: by `rank_scripts` against the current
        issues and schema (the feedback loop's one ranking), or by ``key`` (higher is
        better); ties go to the newest."""
        records = self.list_scripts(prefix, filename, limit)
        if not records:
            return None
        if key is not None:
            # max() keeps the first of equals, and records are newest first
            return max(records, key=key)
        return rank_scripts(records, current_ids=current_ids, schema_hash=schema_hash)[0]


# --------------------------------------------------------------------------
# local folder
# --------------------------------------------------------------------------


class LocalScriptStore(ScriptStore):
    """The store in a local folder (created on first write)."""

    root: str = Field(description="Folder holding the store; created when missing.")

    @property
    def _root(self) -> Path:
        return Path(self.root).expanduser().absolute()

    def _path(self, key: str) -> Path:
        return self._root.joinpath(*key.split("/"))

    def _error(self, action: str, path: Path, e: OSError) -> ScriptStoreError:
        if self._root.exists() and not self._root.is_dir():
            return ScriptStoreError(
                f"the script store {self._root} is a file, not a folder; point "
                "--store / CATALOGER_STORE at a folder"
            )
        return ScriptStoreError(
            f"cannot {action} {path} in the script store {self._root}: "
            f"{e.strerror or e}; point --store / CATALOGER_STORE at a folder you can "
            "read and write"
        )

    def _mkdirs(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._error("create the folder", folder, e) from None

    def _read(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as e:
            raise self._error("read", path, e) from None

    def _write_new(self, key: str, data: bytes) -> None:
        path = self._path(key)
        self._mkdirs(path.parent)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_bytes(data)
            try:
                # link() never replaces, and readers only ever see whole files
                os.link(tmp, path)
            except FileExistsError:
                raise ArtifactExistsError(str(path)) from None
            except OSError:
                # file systems without hard links: still exclusive, not atomic
                try:
                    with open(path, "xb") as f:
                        f.write(data)
                except FileExistsError:
                    raise ArtifactExistsError(str(path)) from None
        except ArtifactExistsError:
            raise
        except OSError as e:
            raise self._error("write", path, e) from None
        finally:
            tmp.unlink(missing_ok=True)

    def _replace(self, key: str, data: bytes) -> None:
        path = self._path(key)
        self._mkdirs(path.parent)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError as e:
            raise self._error("write", path, e) from None
        finally:
            tmp.unlink(missing_ok=True)

    def _list(self, key: str) -> tuple[list[str], list[str]]:
        path = self._path(key)
        folders, files = [], []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    (folders if entry.is_dir() else files).append(entry.name)
        except (FileNotFoundError, NotADirectoryError) as e:
            if self._root.exists() and not self._root.is_dir():
                raise self._error("list", path, e) from None
        except OSError as e:
            raise self._error("list", path, e) from None
        return folders, files

    def _claim(self, folder: str, run_file: bytes) -> bool:
        path = self._path(folder)
        self._mkdirs(path.parent)
        try:
            path.mkdir()  # atomic: exactly one claimant creates the folder
        except FileExistsError:
            return False
        except OSError as e:
            raise self._error("create the folder", path, e) from None
        self._write_new(f"{folder}/{RUN_FILE}", run_file)
        return True

    def _release(self, folder: str) -> None:
        path = self._path(folder)
        (path / RUN_FILE).unlink(missing_ok=True)
        try:
            path.rmdir()
        except OSError:
            pass  # not empty after all: leave it

    def _key_uri(self, key: str) -> str:
        return str(self._path(key))

    def describe(self) -> str:
        return f"local folder {self._root}"


# --------------------------------------------------------------------------

# The S3 backend lives in its own module; it is part of this module's API.
from cataloger_dagster.resources.script_store_s3 import S3ScriptStore  # noqa: E402


def script_store_from_url(url: str, *, s3: S3Resource | None = None) -> ScriptStore:
    """``s3://bucket/prefix`` -> S3ScriptStore; a path or ``file://`` URL ->
    LocalScriptStore.  S3 settings not given in ``s3`` come from the usual AWS
    environment (AWS_PROFILE, AWS_ENDPOINT_URL, AWS_DEFAULT_REGION...)."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the script store location is empty; give a folder or s3://bucket/prefix")
    url = url.strip()
    scheme = urlparse(url).scheme.lower()
    if scheme == "s3":
        parsed = urlparse(url)
        if not parsed.netloc:
            raise ValueError(f"S3 store URL {url!r} has no bucket; use s3://bucket/prefix")
        return S3ScriptStore(bucket=parsed.netloc, prefix=parsed.path.strip("/"), s3=s3)
    if scheme == "file":
        return LocalScriptStore(root=unquote(urlparse(url).path))
    if len(scheme) > 1 and "://" in url:
        raise ValueError(
            f"unsupported script store URL {url!r}: use a folder path or s3://bucket/prefix"
        )
    return LocalScriptStore(root=str(Path(url).expanduser()))

"""The store: every run's scripts, JSON results and HTML pages.

The layout (folders, file names, timestamps) is `cataloger_dagster.core.layout`.
Nothing in a run folder is ever overwritten: every write is exclusive
(`ArtifactExistsError`), and `open_run` claims a fresh folder per Dagster run
by creating its ``run.json`` exclusively.  Only ``index.html`` is replaced,
and each version is first kept under ``index_history/`` (written, not copied,
so that two concurrent index writers cannot lose a version between them).

`CatalogStore` holds all the logic over a handful of storage primitives;
`LocalStore` (local.py) and `S3Store` (s3.py) implement only
those primitives.
"""

from __future__ import annotations

import abc
import json
import secrets
import threading
import uuid
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Callable, Optional

import dagster as dg
from pydantic import BaseModel, Field, PrivateAttr

from cataloger_dagster.core.sensitive.masking import DEFAULT_POLICY, Policy, ValuePolicy
from cataloger_dagster.resources.value_policy import key_value
from cataloger_dagster.core.layout import (  # noqa: F401  (re-exported: the store's API)
    ENTRY_RE,
    HASH_MARK,
    LATEST_WINDOW,
    INDEX_FILE,
    INDEX_HISTORY,
    MAX_SEGMENT,
    RUN_FILE,
    REVIEWS_FOLDER,
    HISTORY,
    TIMELAPSE,
    VALUE_KEY,
    _SEGMENT_RE,
    _TS_RE,
    ScriptRecord,
    _check_filename,
    _check_prefix,
    _next_timestamp,
    format_timestamp,
    metrics_filename,
    name_of_folder,
    new_timestamp,
    normalize_timestamp,
    store_name,
    table_prefix,
)
from cataloger_dagster.core.investigate.ranking import rank_scripts

if TYPE_CHECKING:
    from cataloger_dagster.core.reviews.model import Review

RUN_LOOKBACK = 32  # run folders searched for an open run's id


class StoreError(RuntimeError):
    """The store cannot be used as configured (missing bucket, unwritable folder...)."""


class ArtifactExistsError(FileExistsError):
    """A write would replace a file of an existing run."""

    def __init__(self, path: str):
        super().__init__(
            f"{path} already exists; runs are never overwritten "
            "(open a new run with open_run, or pick another file name)"
        )
        self.path = path


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


class CatalogStore(dg.ConfigurableResource, abc.ABC):
    """Timestamped script storage plus run folders, artifacts and ranking."""

    # what a value of a sensitive column becomes in what the store keeps (core/sensitive/masking.py)
    sensitive_values: Policy = DEFAULT_POLICY
    sensitive_key: Optional[str] = Field(
        default=None,
        description="the key of the `hash` policy: pass dg.EnvVar(...), never the value; "
        "None: a key generated once per catalog and kept in its folder",
    )
    _value_keys: dict = PrivateAttr(default_factory=dict)

    # run ids already resolved by this instance; a claimed folder never changes
    _runs_seen: dict = PrivateAttr(default_factory=dict)
    # (catalog, source) pairs this instance found or made the catalog's own (identity.py)
    _catalogs_claimed: set = PrivateAttr(default_factory=set)

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

    def _replace_cache(self, key: str, data: bytes) -> str | None:
        """Replace a cache object (rebuilt from what it caches when lost); why not, if it could not be."""
        try:
            self._replace(key, data)
        except StoreError as e:
            return str(e)
        return None

    def _list_after(self, folder: str, after: str) -> list[str]:
        """The names of the files directly under ``folder`` that sort after ``after``, sorted;
        never a dot name (S3 overrides it to list only those)."""
        return sorted(f for f in self._list(folder)[1] if f > after and not f.startswith("."))

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
            raise ValueError(
                f"table {table!r} does not live under prefix {prefix!r}; use table_prefix(database, table)"
            )
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

    def find_run(self, prefix: str, run_id: str) -> str | None:
        """The folder ``run_id`` claimed for this table, if it claimed one; never claims."""
        prefix = _check_prefix(prefix)
        cached = self._runs_seen.get((prefix, run_id))
        if cached:
            return cached
        claimed = self._runs_claimed_by(prefix, run_id)
        return claimed[0] if claimed else None

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
        raise StoreError(f"could not claim a run folder under {self.uri(prefix)}")

    # ---- artifacts

    def write_artifact(self, prefix: str, timestamp: str, filename: str, content: str | bytes) -> str:
        key = self._file_key(prefix, timestamp, filename)
        self._write_new(key, _to_bytes(content))
        return self._key_uri(key)

    def read_artifact(self, prefix: str, timestamp: str, filename: str) -> bytes | None:
        return self._read(self._file_key(prefix, timestamp, filename))

    def value_key(self, database: str) -> str:
        """The key of the `hash` policy of the catalog `database`."""
        return self._folder_key(store_name(database))

    def _folder_key(self, folder: str) -> str:
        """The catalog's key of the `hash` policy: the one set, else one generated at random the
        first time and kept in the catalog's folder (read by this store only, never shown), so
        that a digest stays the same from run to run."""
        if self.sensitive_key:
            return key_value(self.sensitive_key)
        if folder not in self._value_keys:
            key = f"{folder}/{VALUE_KEY}"
            try:
                self._write_new(key, secrets.token_hex(32).encode())
            except ArtifactExistsError:
                pass
            found = (self._read(key) or b"").decode().strip()
            if not found:
                raise StoreError(f"{self._key_uri(key)} holds no key: delete it, or set CATALOGER_SENSITIVE_KEY")
            self._value_keys[folder] = found
        return self._value_keys[folder]

    def value_policy(self, database: str) -> ValuePolicy:
        """The sensitive-values policy of the catalog `database` (its folder name or its name)."""
        return self._folder_policy(store_name(database))

    def _folder_policy(self, folder: str) -> ValuePolicy:
        # only `hash` uses a key: no other policy makes one
        return ValuePolicy(self.sensitive_values, self._folder_key(folder) if self.sensitive_values == "hash" else "")

    def write_json(self, prefix: str, timestamp: str, filename: str, data: Any) -> str:
        # every stage's result passes here: a personal value (one that proves its class, or one
        # sampled from a sensitive column) is stored as the policy says, whichever field held it
        data = self._folder_policy(prefix.split("/", 1)[0]).object(data)
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
            raise StoreError(f"{self.uri(prefix, timestamp, filename)} is not valid JSON: {e}") from None

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

    # ---- the table's timelapse: one page in its folder, replaced by each run

    def write_timelapse(self, prefix: str, html: str) -> str:
        key = f"{_check_prefix(prefix)}/{TIMELAPSE}"
        self._replace(key, _to_bytes(html))
        return self._key_uri(key)

    def has_timelapse(self, prefix: str) -> bool:
        return TIMELAPSE in self._list(_check_prefix(prefix))[1]

    def timelapse_uri(self, prefix: str) -> str:
        return self._key_uri(f"{_check_prefix(prefix)}/{TIMELAPSE}")

    # ---- the table's history digest (core.history.digest): one object in its folder, replaced by
    # each run; only a cache of its runs' profile.json, so a lost or stale one is rebuilt from them

    def write_history(self, prefix: str, data: bytes) -> str:
        key = f"{_check_prefix(prefix)}/{HISTORY}"
        self._replace(key, data)
        return self._key_uri(key)

    def read_history(self, prefix: str) -> bytes | None:
        return self._read(f"{_check_prefix(prefix)}/{HISTORY}")

    # ---- append-only logs: one object per entry, created exclusively, so that concurrent
    # writers never lose an entry (S3 has no append).  Reviews and run capsules are two.

    def append_entry(self, folder: str, data: bytes, what: str = "entry", *, name: str | None = None) -> str:
        """Add ``data`` as a new entry of the log in ``folder`` (a key below the store root);
        entries sort by the time they were written, and none is ever replaced.  ``name``: the
        entry's name in another log, when copying it (a second copy is then a no-op)."""
        if name is not None:
            if not ENTRY_RE.match(name):
                raise ValueError(f"{name!r} is not the name of a log entry (<timestamp>-<id>.json)")
            key = f"{folder}/{name}"
            try:
                self._write_new(key, data)
            except ArtifactExistsError:
                pass
            return self._key_uri(key)
        stamp = new_timestamp()
        for _ in range(10_000):
            key = f"{folder}/{stamp}-{uuid.uuid4().hex[:12]}.json"
            try:
                self._write_new(key, data)
                return self._key_uri(key)
            except ArtifactExistsError:
                stamp = _next_timestamp(stamp)
        raise StoreError(f"could not add {what} under {self._key_uri(folder)}")

    def read_entries(self, folder: str, *, latest: int | None = None) -> list[tuple[str, bytes]]:
        """(location, content) of every entry of the log in ``folder`` (or of the ``latest`` few),
        oldest first."""
        _, files = self._list(folder)
        found = []
        names = sorted(f for f in files if f.endswith(".json") and not f.startswith("."))
        for name in names[-latest:] if latest else names:
            data = self._read(f"{folder}/{name}")
            if data is not None:
                found.append((self._key_uri(f"{folder}/{name}"), data))
        return found

    def list_logs(self, folder: str) -> list[str]:
        """The names of the logs (sub-folders) directly under ``folder``."""
        return sorted(self._list(folder)[0])

    def append_review(self, prefix: str, review: "Review") -> str:
        """Add ``review`` to the table's review log; nothing in the log is ever replaced."""
        from cataloger_dagster.resources.store.database_log import review_log

        data = review.model_dump_json(indent=2).encode("utf-8")
        uri = self.append_entry(f"{_check_prefix(prefix)}/{REVIEWS_FOLDER}", data, "a review")
        # and in the database's review log, under the same name: learned precision reads that one
        review_log(self, prefix.strip("/").split("/")[0]).append(data, name=uri.rsplit("/", 1)[-1])
        return uri

    def read_reviews(self, prefix: str) -> list["Review"]:
        """The table's review log, oldest first (by entry name: the time it was written)."""
        from cataloger_dagster.core.reviews.model import Review

        reviews = []
        for uri, data in self.read_entries(f"{_check_prefix(prefix)}/{REVIEWS_FOLDER}"):
            try:
                reviews.append(Review.model_validate_json(data))
            except ValueError as e:
                raise StoreError(f"{uri} is not a valid review: {e}") from None
        return reviews

    # ---- the database's logs (database_log.py): what a table's run reads of all the others

    def append_table_facts(self, database: str, facts: dict) -> str:
        """Add a table run's facts (`database_log.table_facts`) to its database's log."""
        from cataloger_dagster.resources.store.database_log import facts_log

        return facts_log(self, database).append(facts)

    def read_table_facts(self, database: str) -> dict[str, dict]:
        """{table: the facts of its latest run that wrote them}, in a few requests."""
        from cataloger_dagster.resources.store.database_log import facts_log

        return {
            name: facts
            for name, facts in facts_log(self, database).read().items()
            if isinstance(facts.get("table"), str)
        }

    def read_database_reviews(self, database: str) -> tuple[dict[str, list["Review"]], list[str]]:
        """({table: its reviews, oldest first}, entries left out and why) over ``database``."""
        from cataloger_dagster.resources.store.database_log import database_reviews

        return database_reviews(self, database)

    # ---- scripts: one per run folder, found again by timestamp

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

    def write_script_with_metrics(self, prefix: str, timestamp: str, filename: str, content: str, metrics: dict) -> str:
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
            records.append(
                ScriptRecord(
                    timestamp=timestamp,
                    code=code,
                    metrics=self.read_metrics(prefix, timestamp, filename),
                    uri=self.uri(prefix, timestamp, filename),
                )
            )
        return records

    def best_script(
        self,
        prefix: str,
        filename: str,
        *,
        limit: int = LATEST_WINDOW,
        key: Callable[[ScriptRecord], Any] | None = None,
        current_ids: set[str] | None = None,
        schema_hash: str | None = None,
    ) -> ScriptRecord | None:
        """The best of the last ``limit`` scripts: by `rank_scripts` against the current
        issues and schema (the feedback loop's one ranking), or by ``key`` (higher is
        better); ties go to the newest.  By the ranking, None when only scripts from
        outside the catalog are stored (they are never fed to a run)."""
        records = self.list_scripts(prefix, filename, limit)
        if not records:
            return None
        if key is not None:
            # max() keeps the first of equals, and records are newest first
            return max(records, key=key)
        ranked = rank_scripts(records, current_ids=current_ids, schema_hash=schema_hash)
        return ranked[0] if ranked else None

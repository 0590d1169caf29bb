"""Logs of a whole database, read in a few requests however many tables it has.

Some steps of a table's run look at every other table of its database: the reference search
(their keys), the choice of a script to start from (the most similar table's), learned precision
(every review).  Read table by table, that is a listing and a read or two per other table, in
every table's run: at 1,000 tables, thousands of requests a table, each 10-30 ms on S3.

Instead each fact is also an entry of a log in the database's folder: one object, created
exclusively, so concurrent runs lose nothing (S3 has no append).  A reader reads the log's
digest (the entries folded so far, in one object) and then only the entries after it: one
listing from where the digest ends, and the few entries written since.  The digest is a cache:
whichever reader folded more replaces it, and a lost, stale or unreadable one costs only a
slower read, since the entries stay the truth.

An entry is folded only once it has settled (`SETTLE`): a writer names its entry by its own
clock before the write lands, so a name just behind the newest one seen may still appear (a
slow write, another host's clock).  Unsettled entries are read every time.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable

from cataloger_dagster.core.layout import (
    _TS_RE,
    ENTRY_RE,
    REVIEW_LOG,
    REVIEWS_FOLDER,
    TABLE_FACTS,
    format_timestamp,
    parse_timestamp,
    store_name,
    table_prefix,
)
from cataloger_dagster.core.models import TableProfile

if TYPE_CHECKING:
    from cataloger_dagster.core.reviews.model import Review
    from cataloger_dagster.resources.store.base import CatalogStore

SETTLE = timedelta(minutes=2)  # far beyond a write's time in flight and NTP's clock skew
DIGEST = ".digest.json"  # dot names: never listed as entries
MIGRATED = ".migrated"  # the review log: the tables' own logs have been copied in
FOLD_AT = 16  # entries read beyond the digest before a reader replaces it
_STAMP = len("2026-11-22T10:00:00.123456Z")
_VERSION = 1


class DatabaseLog:
    """The log in ``folder`` (<database segment>/<name>) of ``store``.  ``key`` says which entries replace each
    other (the later wins): by entry name to keep them all, by table to keep each table's latest."""

    def __init__(
        self, store: CatalogStore, folder: str, key: Callable[[str, dict], str] = lambda entry_name, entry: entry_name
    ) -> None:
        self.store, self.folder, self.key = store, folder, key
        self.problems: list[str] = []  # entries left out by the last read, and why

    def append(self, entry: dict | bytes, *, name: str | None = None) -> str:
        """Add ``entry`` (a JSON object, or its bytes); with ``name`` (an entry copied from
        another log), once: a second copy under the same name is a no-op."""
        data = entry if isinstance(entry, bytes) else json.dumps(entry, ensure_ascii=False).encode("utf-8")
        return self.store.append_entry(self.folder, data, f"an entry of {self.folder}", name=name)

    def read(self) -> dict[str, dict]:
        """{key: entry}, the latest entry of each key, in the order they were written."""
        self.problems = []
        through, latest, recent = self._digest()
        # a writer names its entry by its clock before the write lands: the names of the last
        # SETTLE before the digest's newest are listed again, and those it holds skipped
        window = format_timestamp(parse_timestamp(through[:_STAMP]) - SETTLE) if through else ""
        names = [n for n in self.store._list_after(self.folder, window) if ENTRY_RE.match(n) and n not in recent]
        for entry_name in names:
            entry = self._entry(entry_name)
            if entry is None:
                continue
            key = self.key(entry_name, entry)
            if key not in latest or latest[key][0] < entry_name:  # a late write never undoes a newer one
                latest[key] = [entry_name, entry]
        if len(names) >= FOLD_AT:
            through = max(through, names[-1])
            since = format_timestamp(parse_timestamp(through[:_STAMP]) - SETTLE)
            refused = self._write_digest(through, latest, sorted(n for n in (*recent, *names) if n >= since))
            if refused:  # a reader that may not write (a read-only key): only slower
                self.problems.append(f"the digest of {self.store._key_uri(self.folder)} was not updated: {refused}")
        return {key: entry for key, (_, entry) in sorted(latest.items(), key=lambda item: item[1][0])}

    def _entry(self, entry_name: str) -> dict | None:
        data = self.store._read(f"{self.folder}/{entry_name}")
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except ValueError as e:
            entry, why = None, f"not valid JSON: {e}"
        else:
            why = "not a JSON object"
        if not isinstance(entry, dict):
            self.problems.append(f"{self.store._key_uri(f'{self.folder}/{entry_name}')} is {why}")
            return None
        return entry

    def _digest(self) -> tuple[str, dict[str, list[Any]], set[str]]:
        data = self.store._read(f"{self.folder}/{DIGEST}")
        try:
            digest = json.loads(data) if data is not None else None
        except ValueError:
            digest = None
        if not (
            isinstance(digest, dict)
            and digest.get("version") == _VERSION
            and ENTRY_RE.match(str(digest.get("through")))
            and isinstance(digest.get("entries"), dict)
            and isinstance(digest.get("recent"), list)
            and all(
                isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], dict)
                for v in digest["entries"].values()
            )
        ):
            return "", {}, set()  # none yet, or unreadable: every entry is read again
        return digest["through"], digest["entries"], set(map(str, digest["recent"]))

    def _write_digest(self, through: str, entries: dict[str, list[Any]], recent: list[str]) -> str | None:
        data = json.dumps(
            {"version": _VERSION, "through": through, "recent": recent, "entries": entries}, ensure_ascii=False
        )
        return self.store._replace_cache(f"{self.folder}/{DIGEST}", data.encode("utf-8"))


# ---- the two logs: each table's facts for the others' runs, and every review of the database


def table_facts(profile: TableProfile, run: str, keys: TableProfile) -> dict:
    """What the other tables' runs read of this one: its run, its columns' names and kinds (the
    similarity of two tables) and its key profile (the reference search's candidates), without
    the fields left at their defaults (most of a key profile: every table's run reads all the
    others', and at a third less to parse, reads them in half the time; validating restores them)."""
    return {
        "table": profile.table,
        "run": run,
        "columns": [[c.name, c.kind] for c in profile.columns],
        "keys": keys.model_dump(mode="json", exclude_defaults=True),
    }


def facts_log(store: CatalogStore, database: str) -> DatabaseLog:
    return DatabaseLog(store, f"{store_name(database)}/{TABLE_FACTS}", key=lambda _, entry: str(entry.get("table")))


def review_log(store: CatalogStore, database_segment: str) -> DatabaseLog:
    return DatabaseLog(store, f"{database_segment}/{REVIEW_LOG}")


def database_reviews(store: CatalogStore, database: str) -> tuple[dict[str, list[Review]], list[str]]:
    """({table: its reviews, oldest first}, problems) over the whole database, from its review
    log.  A store written before the log existed has its reviews only in the tables' own logs:
    they are copied in once, under their own names (so a copy made twice is one)."""
    from cataloger_dagster.core.reviews.model import Review

    log = review_log(store, store_name(database))
    if store._read(f"{log.folder}/{MIGRATED}") is None:
        for table in store.list_tables(database):
            folder = f"{table_prefix(database, table)}/{REVIEWS_FOLDER}"
            for uri, data in store.read_entries(folder):
                log.append(data, name=_copied_name(table, uri.rsplit("/", 1)[-1]))
        store._replace(f"{log.folder}/{MIGRATED}", b"{}")
    logs: dict[str, list[Review]] = {}
    problems: list[str] = []
    for entry_name, entry in log.read().items():
        try:
            review = Review.model_validate(entry)
        except ValueError as e:
            problems.append(f"{store._key_uri(f'{log.folder}/{entry_name}')} is not a valid review: {e}")
            continue
        logs.setdefault(review.table, []).append(review)
    return logs, [*log.problems, *problems]


def _copied_name(table: str, name: str) -> str:
    """The review log's name for a table's entry: its own, or, for a name no writer of ours
    made (one put there by hand), one derived from it: the same on every copy."""
    if ENTRY_RE.match(name):
        return name
    digest = hashlib.sha256(f"{table}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stamp = name[:_STAMP] if _TS_RE.match(name[:_STAMP]) else "0001-01-01T00:00:00.000000Z"
    return f"{stamp}-{digest}.json"

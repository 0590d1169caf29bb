"""Which earlier script a run starts from: the feedback loop's choices: ranking, exploration, transfer.

- Ranking: the best of the table's last 10 scripts by `ranking.rank_scripts`
  (pass rate, then coverage of the *current* issues, then whether it was written
  for the current schema, then time), the ranking `cataloger scripts` shows too.
  A script that a later run found failing on the table (its `relearned` issues)
  has its pass rate lowered by those failures, so a worse script is never fed
  forward again: the old one stays stored (the backup), the reuse run tests it,
  and the ranking reverts to whichever did better.  Only the catalog's own
  scripts rank: one saved from outside (MCP) never starts a run.
- Exploration: a seeded fraction of runs (and every run asked to `explore`)
  ignores earlier scripts.
- Transfer: a table with no history starts from the script of the most similar
  table of the same database (column names and kinds).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Optional

from cataloger_dagster.core import layout
from cataloger_dagster.core.investigate.investigator import PreviousScript
from cataloger_dagster.core.investigate.ranking import rank_scripts
from cataloger_dagster.core.layout import ISSUES, LATEST_WINDOW, PROFILE, SCRIPT  # noqa: F401  (SCRIPT: re-exported)
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.core.results import ResultError, latest_results, load_run

if TYPE_CHECKING:  # the resource is passed in; core never imports resources at run time
    from cataloger_dagster.resources.store import CatalogStore
WINDOW = LATEST_WINDOW
MIN_SIMILARITY = 0.3


def ranking_context(store: CatalogStore, prefix: str) -> tuple[Optional[set[str]], Optional[str]]:
    """The issues and schema the next run will rank against, as far as the store knows
    without connecting to the database: those of the latest run that stored its issues
    (unchanged since, the table gives the next run the same).  (None, None) when none has."""
    for timestamp in reversed(store.list_runs(prefix)):
        run = load_run(store, prefix, timestamp)
        try:
            issues = run.issues
        except ResultError:
            continue  # a damaged issues.json ranks nothing
        if issues is None:
            continue
        try:
            schema_hash = run.profile.fingerprint.schema_hash if run.profile else None
        except ResultError:
            schema_hash = None
        return {i.id for i in issues.issues}, schema_hash
    return None, None


def should_explore(rate: float, seed: int, table: str, run_number: int) -> bool:
    """Seeded, so a given table's n-th run decides the same way every time."""
    if rate <= 0:
        return False
    return random.Random(f"{seed}:{table}:{run_number}").random() < rate


def _signature(pairs) -> set[tuple[str, str]] | None:
    """A table's columns as (lower-case name, kind): ``pairs`` of them, or None if malformed."""
    try:
        return {(name.lower(), str(kind)) for name, kind in pairs}
    except (TypeError, ValueError, AttributeError):
        return None


def _signatures(store: CatalogStore, database: str, table: str) -> dict[str, set[tuple[str, str]]]:
    """{table: its columns' names and kinds} of the other tables: from the database's log of
    table facts (one read however many tables), and from the latest profile of a table that
    wrote none there (a store written before the log)."""
    found = {name: _signature(facts.get("columns") or []) for name, facts in store.read_table_facts(database).items()}
    for other in store.list_tables(database):  # names, not folders: the store decodes them
        if found.get(other) is not None:
            continue
        prefix = layout.table_prefix(database, other)
        try:
            latest = latest_results(store, prefix, PROFILE, limit=1)
        except ResultError:
            continue  # a damaged profile: the table is compared with nothing
        if latest:
            found[other] = _signature((c.name, c.kind) for c in latest[0][1].columns)
    return {name: pairs for name, pairs in found.items() if name != table and pairs is not None}


def similar_table_script(
    store: CatalogStore, database: str, profile: TableProfile
) -> Optional[tuple[PreviousScript, float]]:
    """The best script of the most similar other table (Jaccard over names and kinds)."""
    mine = {(c.name.lower(), c.kind) for c in profile.columns}
    best: Optional[tuple[float, str, str]] = None
    for other, theirs in sorted(_signatures(store, database, profile.table).items()):
        union = mine | theirs
        score = len(mine & theirs) / len(union) if union else 0.0
        if score >= MIN_SIMILARITY and (best is None or score > best[0]):
            best = (score, other, layout.table_prefix(database, other))
    if best is None:
        return None
    score, other, prefix = best
    records = store.list_scripts(prefix, SCRIPT, limit=WINDOW)
    if not records:
        return None
    ranked = rank_scripts(records, current_ids=set(), schema_hash=None)
    if not ranked:
        return None
    top = ranked[0]
    return PreviousScript(timestamp=top.timestamp, code=top.code, table=other), score


def choose_previous_script(
    store: CatalogStore,
    database: str,
    profile: TableProfile,
    current_ids: set[str],
    *,
    explore: bool,
    exploration_rate: float,
    exploration_seed: int,
) -> tuple[Optional[PreviousScript], str]:
    """The script to start from, and why (shown in metadata and metrics)."""
    prefix = layout.table_prefix(database, profile.table)
    if explore:
        return None, "explore requested: earlier scripts ignored (relearning)"
    runs = store.list_runs(prefix)
    if should_explore(exploration_rate, exploration_seed, profile.table, len(runs)):
        return None, f"exploration run (rate {exploration_rate:g})"
    records = store.list_scripts(prefix, SCRIPT, limit=WINDOW)
    ranked = rank_scripts(records, current_ids=current_ids, schema_hash=profile.fingerprint.schema_hash)
    if ranked:
        top = ranked[0]
        return PreviousScript(timestamp=top.timestamp, code=top.code, table=profile.table), (
            f"best of the last {len(records)} scripts: {top.timestamp}"
        )
    transfer = similar_table_script(store, database, profile)
    if transfer is not None:
        script, score = transfer
        return script, f"no history: starting from {script.table}'s script ({score:.0%} similar)"
    return None, "no earlier script: exploring"

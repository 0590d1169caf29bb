"""A Dagster concurrency pool per database: how many catalog runs may query it at once.

Why a pool rather than a run-tag limit of the queued run coordinator: a pool travels with
the assets, so every run that materializes a table's assets waits for it, whichever way it
was launched (the sensors' and the schedule's runs, a backfill or a "Materialize" click in
the UI, `cataloger run`); a tag reaches only the runs whose launcher sets it.  A pool's
limit lives in the instance, so one database's limit can be changed while runs wait (the
UI's concurrency page, `dagster instance concurrency set`), and the UI shows which runs
hold and wait for it.  With `concurrency: pools: granularity: run` (deploy/dagster.yaml)
the run queue starts a run only when its database has a free slot: the others wait QUEUED
and hold no process; with the default (`op`) granularity runs would start and wait inside.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

import dagster as dg

from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.settings.model import CatalogerSettings

POOL_PREFIX = "cataloger/"
# what a pool name keeps as it is: it is typed in a shell (`dagster instance concurrency set`)
SAFE_POOL_CHARACTERS = re.compile(r"[^A-Za-z0-9_.-]")
MAX_POOL_NAME = 80
CONFIG_HINT = "see deploy/dagster.yaml"


def database_pool(database_name: str) -> str:
    """The pool of a database: `cataloger/<name>`, where a name with other characters than
    letters, digits, `_.-` (quotes, spaces, unicode) is kept readable and told apart from
    its neighbours by a hash of the name as written."""
    safe = SAFE_POOL_CHARACTERS.sub("_", database_name)[:MAX_POOL_NAME] or "_"
    if safe != database_name:
        safe += "-" + hashlib.sha256(database_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return POOL_PREFIX + safe


def settings_pool(settings: CatalogerSettings) -> str:
    """The pool of the database the settings name (by its name: the URL may hold a password)."""
    return database_pool(DatabaseResource(url=settings.database, name=settings.name).database_name)


def with_pool(assets: Sequence[dg.AssetsDefinition], pool: str) -> list[dg.AssetsDefinition]:
    """`assets` with each one's op in `pool`.

    The assets are declared once, without settings (jobs.py), while the pool's name comes
    from the database the settings name, so each is rebuilt here around a copy of its op in
    the pool: an asset's specs (its key, partitions, metadata, code version) carry no pool."""
    return [_asset_in_pool(asset, pool) for asset in assets]


def _asset_in_pool(asset: dg.AssetsDefinition, pool: str) -> dg.AssetsDefinition:
    op = asset.op
    if op.pool == pool:
        return asset
    # an asset's code version is on its outputs (kept by Out.from_definition), not on its op
    pooled = dg.OpDefinition(
        compute_fn=op.compute_fn,
        name=op.name,
        description=op.description,
        ins={d.name: dg.In.from_definition(d) for d in op.input_defs},
        outs={d.name: dg.Out.from_definition(d) for d in op.output_defs},
        config_schema=op.config_schema,
        required_resource_keys=op.required_resource_keys,
        tags=op.tags,
        retry_policy=op.retry_policy,
        pool=pool,
    )
    return dg.AssetsDefinition(
        node_def=pooled,
        keys_by_input_name=asset.keys_by_input_name,
        keys_by_output_name=asset.keys_by_output_name,
        specs=list(asset.specs),
        can_subset=asset.can_subset,
        backfill_policy=asset.backfill_policy,
        check_specs_by_output_name=asset.check_specs_by_output_name,
        resource_defs=asset.resource_defs,
        hook_defs=asset.hook_defs,
    )


def apply_pool_limit(
    instance: dg.DagsterInstance, pool: str, limit: int, *, explicit: bool, warn: Callable[[str], None]
) -> int | None:
    """Give `pool` its limit in `instance`; returns the limit the pool now has (None: none).

    `explicit` (CATALOGER_DATABASE_CONCURRENCY is set): the pool's limit is `limit`, whoever
    set it before.  Otherwise `limit` is only a default: a pool without a limit gets it,
    unless dagster.yaml gives pools a default (`pools: default_limit`), which Dagster then
    applies; a limit set in the UI or with `dagster instance concurrency set` stays."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        warn(
            f"this Dagster instance's storage has no concurrency pools: runs of {pool} are not limited "
            f"(run `dagster instance migrate`, {CONFIG_HINT})"
        )
        return None
    for problem in pool_config_problems(instance):
        warn(f"{pool}: {problem}")
    current = {p.name: p.limit for p in storage.get_pool_limits()}.get(pool)
    if explicit or (current is None and instance.global_op_concurrency_default_limit is None):
        if current != limit:
            storage.set_concurrency_slots(pool, limit)
        return limit
    return current


def apply_settings_limit(
    instance: dg.DagsterInstance, settings: CatalogerSettings, warn: Callable[[str], None]
) -> int | None:
    """`apply_pool_limit` for the settings' database and CATALOGER_DATABASE_CONCURRENCY."""
    return apply_pool_limit(
        instance,
        settings_pool(settings),
        settings.database_concurrency,
        explicit="database_concurrency" in settings.model_fields_set,
        warn=warn,
    )


def pool_config_problems(instance: dg.DagsterInstance) -> list[str]:
    """Why this instance's configuration would let a database's runs exceed its pool's limit
    while they run, or start them only to wait: each with what to set."""
    if not isinstance(instance.run_coordinator, dg.QueuedRunCoordinator):
        return [
            f"the run coordinator is {type(instance.run_coordinator).__name__}, which does not queue runs: "
            f"set `run_coordinator` to the QueuedRunCoordinator in dagster.yaml ({CONFIG_HINT})"
        ]
    granularity = instance.get_concurrency_config().pool_config.pool_granularity
    if getattr(granularity, "value", None) != "run":
        return [
            "pool granularity is not `run`: runs start and wait inside for their database's slot "
            f"instead of waiting queued; set `concurrency: pools: granularity: run` in dagster.yaml "
            f"({CONFIG_HINT})"
        ]
    return []

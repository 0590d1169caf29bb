"""A worker process of `cataloger run --jobs N` (`cli/batches.py`): ``python -m cataloger_dagster.cli.worker
<batches fd> <reports fd>``.

It receives (settings, instance ref, investigations config, warm sandboxes to keep), then batches of tables until
None, and catalogs each batch as the runner does in its own process: its own resources,
Dagster instance (the same one, by reference), shared state (its `run_state` resource: the
reference search's facts) and warm sandboxes (its `sandbox_pool` resource).
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection


def main(batches_fd: int, reports_fd: int) -> None:
    import dagster as dg

    from cataloger_dagster.assets.pools import settings_pool, with_pool
    from cataloger_dagster.cli.batches import progress_sender, serve_batches
    from cataloger_dagster.cli.runner import batch_cataloger
    from cataloger_dagster.jobs import TABLE_ASSETS
    from cataloger_dagster.cli.stopping import Interrupted, stop_on_signals
    from cataloger_dagster.resources.sandbox.pool import SandboxPool
    from cataloger_dagster.settings.factories import resources

    batches, reports = Connection(batches_fd, writable=False), Connection(reports_fd, readable=False)
    try:
        setup = batches.recv()
    except EOFError:  # the runner is gone already
        return
    if setup is None:
        return
    settings, instance_ref, investigations_config, spares = setup
    table_assets = with_pool(TABLE_ASSETS, settings_pool(settings))
    try:
        with stop_on_signals(), dg.DagsterInstance.from_ref(instance_ref) as instance, SandboxPool(spares) as pool:
            # the worker's runs share its resources: one `sandbox_pool`, one `run_state`
            catalog = batch_cataloger(
                resources(settings, kept_sandboxes=pool),
                instance,
                investigations_config,
                table_assets,
                progress_sender(reports),
            )
            serve_batches(batches, reports, catalog)
    except Interrupted as stop:  # its run and its sandboxes are closed: it ends as the signal would end it
        sys.exit(stop.exit_code)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))

"""When Dagster rebuilds `catalog_index` by itself: after the table runs, however they were launched.

A declarative condition, not a run-status sensor, because it reads what the tables' runs did to
the assets (a new `catalog_page` of any partition), whoever launched them: the change sensor,
the UI's launchpad, a backfill.  Dagster also knows which runs and backfills still plan to
update a page, which is what debounces it:

- a page of any table updated since the index was last requested or built (`since_last_handled`:
  once per change, never again while nothing changed);
- and no page still planned by a queued or running run or backfill, so a backfill of 100
  tables rebuilds the index once, at its end, not 100 times; while runs keep coming without a
  pause, at most every BUSY_REFRESH_CRON tick, so the index is never older than that;
- and the index is not already requested or running.

Unlike `AutomationCondition.eager()`, a table without a page yet (just added, or its run failed)
does not hold the index back: the index lists it as not cataloged.
"""

import dagster as dg

# the longest an index waits while table runs never stop
BUSY_REFRESH_CRON = "*/15 * * * *"

# Dagster's annotations give a condition on assets a check's key too: combined, they disagree
AFTER_TABLE_RUNS = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & (
        ~dg.AutomationCondition.any_deps_in_progress()
        | dg.AutomationCondition.cron_tick_passed(BUSY_REFRESH_CRON).since_last_handled()  # type: ignore[misc, operator]
    )
    & ~dg.AutomationCondition.in_progress()
).with_label("after table runs")

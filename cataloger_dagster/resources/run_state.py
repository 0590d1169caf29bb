"""RunSharedState: what the table runs of one process share, handed to the assets as a resource.

Tables are cataloged one after another in one process: by `cataloger run` (its batches, or each
worker's), and by each run's process under `dagster dev`.  Some facts hold for all of them: the
keys of the database's other tables, which every table's reference search asks for.  Read once
and kept here, they cost a query per table, not one per pair of tables.

The state lives as long as the resources that hold it (`settings.resources`): one `cataloger run`
or worker, or one process of the code location (a run's, under `dagster dev`); every asset that
uses it names it in its signature (`run_state`), so the same asset does the same thing however
it was launched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunSharedState:
    # facts about the database's tables that do not depend on the table being checked (their
    # keys, the values of a key): plain data, `core.issues.detectors.context.Context.shared`
    across_tables: dict[tuple[str, str], Any] = field(default_factory=dict)


__all__ = ["RunSharedState"]

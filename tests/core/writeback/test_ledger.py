"""The ledger of the comments the catalog wrote, in a real local store."""

from __future__ import annotations

from commented_tables import DATABASE, ODD_COLUMN, TABLE, understanding
from cataloger_dagster.core.layout import WRITEBACK_FOLDER, table_prefix
from cataloger_dagster.core.writeback.ledger import catalog_comments, remember
from cataloger_dagster.core.writeback.plan import plan_comments
from cataloger_dagster.resources.store import LocalStore


def test_what_the_catalog_wrote_is_remembered_per_object_and_a_bad_entry_adds_nothing(tmp_path):
    store, prefix = LocalStore(root=str(tmp_path)), table_prefix(DATABASE, TABLE)
    current = {None: None, "id": "A person's text.", ODD_COLUMN: None}
    changes = plan_comments(TABLE, understanding(), current, {})
    assert remember(store, prefix, changes, applied=False)
    store.append_entry(f"{prefix}/{WRITEBACK_FOLDER}", b"not json")
    store.append_entry(f"{prefix}/{WRITEBACK_FOLDER}", b'{"comments": [{"column": "id", "text": 3}]}')
    assert catalog_comments(store, prefix) == {None: {"One row per order."}, ODD_COLUMN: {understanding().columns[1].description}}
    unchanged = plan_comments(TABLE, understanding(), {None: "One row per order."}, {})
    assert remember(store, prefix, unchanged, applied=True) is None  # nothing written, nothing added
    assert catalog_comments(store, table_prefix(DATABASE, "other")) == {}

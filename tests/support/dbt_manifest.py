"""A small dbt manifest.json, hand-written with the keys of dbt's real schema that the catalog
reads: a model (aliased) and a source with descriptions, and generic tests attached to each,
one test reaching its model only through depends_on."""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST = {
    "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
    "nodes": {
        "model.shop.stg_orders": {
            "resource_type": "model", "name": "stg_orders", "alias": "orders", "schema": "main",
            "description": "Orders as the shop records them, one row per order.",
            "columns": {
                "order_id": {"name": "order_id", "description": "The order's key."},
                "status": {"name": "status", "description": ""},
            },
        },
        "test.shop.unique_stg_orders_order_id.1a": {
            "resource_type": "test", "name": "unique_stg_orders_order_id", "column_name": "order_id",
            "test_metadata": {"name": "unique", "kwargs": {"column_name": "order_id", "model": "{{ ref('stg_orders') }}"}},
            "attached_node": "model.shop.stg_orders", "depends_on": {"nodes": ["model.shop.stg_orders"]},
        },
        "test.shop.accepted_values_stg_orders_status.2b": {
            "resource_type": "test", "name": "accepted_values_stg_orders_status",
            "test_metadata": {"name": "accepted_values",
                              "kwargs": {"column_name": "status", "values": ["placed", "shipped"]}},
            "depends_on": {"nodes": ["model.shop.stg_orders"]},
        },
        "test.shop.not_null_customers_name.3c": {
            "resource_type": "test", "name": "source_not_null_raw_customers_name", "column_name": "name",
            "test_metadata": {"name": "not_null", "kwargs": {"column_name": "name"}},
            "attached_node": "source.shop.raw.customers",
        },
        "test.shop.singular_check.4d": {  # a singular test: no test_metadata, nothing to match
            "resource_type": "test", "name": "orders_total_positive", "depends_on": {"nodes": ["model.shop.stg_orders"]},
        },
    },
    "sources": {
        "source.shop.raw.customers": {
            "resource_type": "source", "name": "customers", "identifier": "Customers",
            "description": "Everyone who ever ordered.",
            "columns": {"name": {"name": "name", "description": "As the customer typed it."}},
        },
    },
}


def write_manifest(folder: Path) -> Path:
    path = folder / "manifest.json"
    path.write_text(json.dumps(MANIFEST), encoding="utf-8")
    return path

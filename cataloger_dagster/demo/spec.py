"""What the demo database plants, in one place.

The generator reads its rates and counts from `DEFECTS`; `answer_key.json`
beside this module is written from the same list (`write_answer_key`), so the
key can never drift from the data.  Editing the JSON changes nothing in the
data: it is an output, not an input.

Each defect carries a `measure`: a SQL query returning the number of affected
rows, so a test can check with plain SQL that the defect really is there.
`rate` is a fraction of the table's rows (the count scales with `scale`);
`rows` is an exact count that does not scale, for defects that are "a few".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ANSWER_KEY_PATH = Path(__file__).with_name("answer_key.json")

# Base row counts at scale 1.0.  countries is a fixed reference list.
TABLE_ROWS = {
    "countries": None,  # always the full list (30 rows)
    "products": 600,
    "customers": 20_000,
    "orders": 60_000,
    "order_items": None,  # 1-4 items per order, about 2.5 x orders
    "web_events": 250_000,
}

CLEAN_TABLES = ("countries",)

ORDER_STATUSES = ("pending", "shipped", "delivered", "cancelled", "returned")
PRODUCT_CATEGORIES = (
    "Electronics",
    "Home & Kitchen",
    "Books",
    "Toys",
    "Sports",
    "Clothing",
    "Beauty",
    "Garden",
)
STRING_SENTINELS = ("N/A", "NA", "-")
NUMERIC_SENTINEL = -999
GRAMS_FLOOR = 50.0  # every weight planted in grams is above this (the rest under 10 kg)
SPEND_FLOOR = 6_000.0  # the implausible consumer spends more than this (the others far less)
OUTLIER_FLOOR = 250_000.0  # every planted order-amount outlier is above this
FUTURE_FROM = "2200-01-01"  # every planted future order date is after this
PHONE_REGEX = r"\+[0-9]{1,3}( [0-9]{2,4}){2,4}"
EMAIL_REGEX = r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}"


def _in(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


DEFECTS: list[dict[str, Any]] = [
    {
        "table": "customers",
        "type": "missing_values",
        "columns": ["phone"],
        "rate": 0.065,
        "note": "phone is NULL (6%) or an empty string (0.5%): low severity (<20%)",
        "measure": "SELECT count(*) FROM customers WHERE phone IS NULL OR trim(phone) = ''",
    },
    {
        "table": "customers",
        "type": "invalid_format",
        "columns": ["phone"],
        "rate": 0.015,
        "note": "phone numbers that are not '+CC NNN NNNN NNNN' ('555-01', 'call after 5pm', ...)",
        "measure": "SELECT count(*) FROM customers WHERE trim(phone) <> '' "
        f"AND NOT regexp_full_match(phone, '{PHONE_REGEX}')",
    },
    {
        "table": "customers",
        "type": "invalid_format",
        "columns": ["email"],
        "rate": 0.02,
        "note": "malformed emails: missing '@', missing domain, embedded space",
        "measure": f"SELECT count(*) FROM customers WHERE NOT regexp_full_match(email, '{EMAIL_REGEX}')",
    },
    {
        "table": "customers",
        "type": "duplicate_keys",
        "columns": ["email"],
        "rate": 0.01,
        "note": "customers who registered twice: a second customer_id with another customer's email",
        "measure": "SELECT count(*) - count(DISTINCT email) FROM customers",
    },
    {
        "table": "customers",
        "type": "sentinel_values",
        "columns": ["city"],
        "rate": 0.04,
        "note": f"city holds {', '.join(STRING_SENTINELS)} instead of NULL",
        "measure": f"SELECT count(*) FROM customers WHERE city IN ({_in(STRING_SENTINELS)})",
    },
    {
        "table": "customers",
        "type": "date_as_text",
        "columns": ["signup_date"],
        "rate": 1.0,
        "note": "signup_date is VARCHAR holding ISO dates",
        "measure": "SELECT count(*) FROM customers WHERE TRY_CAST(signup_date AS DATE) IS NOT NULL",
    },
    {
        "table": "products",
        "type": "numeric_as_text",
        "columns": ["price_text"],
        "rate": 1.0,
        "note": "price_text is VARCHAR holding decimal prices",
        "measure": "SELECT count(*) FROM products WHERE TRY_CAST(price_text AS DOUBLE) IS NOT NULL",
    },
    {
        "table": "products",
        "type": "missing_values",
        "columns": ["weight_kg"],
        "rate": 0.35,
        "note": "weight_kg is NULL: medium severity (20-50%)",
        "measure": "SELECT count(*) FROM products WHERE weight_kg IS NULL",
    },
    {
        "table": "products",
        "type": "inconsistent_categories",
        "columns": ["category"],
        "rate": 0.08,
        "note": "casing / wording variants: 'electronics', 'ELECTRONICS', 'books', "
        "'Home & kitchen', 'Home and Kitchen'",
        "measure": f"SELECT count(*) FROM products WHERE category NOT IN ({_in(PRODUCT_CATEGORIES)})",
    },
    {
        "table": "products",
        "type": "constant_column",
        "columns": ["supplier"],
        "rate": 1.0,
        "note": "supplier is 'Northwind Traders' on every row",
        "measure": "SELECT count(*) FROM products WHERE (SELECT count(DISTINCT supplier) FROM products) = 1",
    },
    {
        "table": "products",
        "type": "rule_violations",
        "columns": ["min_order_qty", "max_order_qty"],
        "rows": 2,
        "note": "min_order_qty above max_order_qty (the two swapped on entry) where every other product "
        "has min_order_qty <= max_order_qty",
        "measure": "SELECT count(*) FROM products WHERE min_order_qty > max_order_qty",
    },
    {
        "table": "orders",
        "type": "duplicate_keys",
        "columns": ["order_id"],
        "rate": 0.003,
        "note": "orders re-imported under the same order_id with another status and amount",
        "measure": "SELECT count(*) - count(DISTINCT order_id) FROM orders",
    },
    {
        "table": "orders",
        "type": "orphan_references",
        "columns": ["customer_id"],
        "rate": 0.015,
        "note": "customer_id values with no row in customers",
        "measure": "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT customer_id FROM customers)",
    },
    {
        "table": "orders",
        "type": "out_of_range",
        "columns": ["order_date"],
        "rows": 12,
        "note": f"order dates in the future (typos such as 2204 for 2024, all after {FUTURE_FROM})",
        "measure": f"SELECT count(*) FROM orders WHERE order_date > DATE '{FUTURE_FROM}'",
    },
    {
        "table": "orders",
        "type": "inconsistent_categories",
        "columns": ["status"],
        "rate": 0.06,
        "note": "'Shipped', 'SHIPPED', 'canceled' beside the canonical values",
        "measure": f"SELECT count(*) FROM orders WHERE trim(status) NOT IN ({_in(ORDER_STATUSES)})",
    },
    {
        "table": "orders",
        "type": "whitespace_values",
        "columns": ["status"],
        "rate": 0.02,
        "note": "'shipped ' and ' delivered': statuses stored with a space at one end",
        "measure": "SELECT count(*) FROM orders WHERE status <> trim(status)",
    },
    {
        "table": "orders",
        "type": "outliers",
        "columns": ["total_amount"],
        "rows": 8,
        "note": f"order totals above {OUTLIER_FLOOR:,.0f} where the median is about 100",
        "measure": f"SELECT count(*) FROM orders WHERE total_amount > {OUTLIER_FLOOR}",
    },
    {
        "table": "order_items",
        "type": "orphan_references",
        "columns": ["order_id"],
        "rate": 0.01,
        "note": "order_id values with no row in orders",
        "measure": "SELECT count(*) FROM order_items WHERE order_id NOT IN (SELECT order_id FROM orders)",
    },
    {
        "table": "order_items",
        "type": "out_of_range",
        "columns": ["quantity"],
        "rate": 0.004,
        "note": "negative quantities",
        "measure": "SELECT count(*) FROM order_items WHERE quantity < 0",
    },
    {
        "table": "order_items",
        "type": "duplicate_rows",
        "columns": ["order_id", "product_id", "quantity", "unit_price"],
        "rate": 0.01,
        "note": "order lines inserted twice",
        "measure": "SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT * FROM order_items)) FROM order_items",
    },
    {
        "table": "products",
        "type": "scale_errors",
        "columns": ["weight_kg"],
        "rows": 3,
        "note": f"weights typed in grams (x1000) where the others are kilograms: all above {GRAMS_FLOOR:g}",
        "measure": f"SELECT count(*) FROM products WHERE weight_kg > {GRAMS_FLOOR}",
    },
    {
        "table": "products",
        "type": "mixed_units",
        "columns": ["package_length"],
        "rate": 0.1,
        "note": "package lengths written 'NN cm', and some as 'NN in' or feet and inches (5'4\")",
        "measure": "SELECT count(*) FROM products WHERE package_length NOT LIKE '% cm'",
    },
    {
        "table": "customers",
        "type": "implausible_values",
        "columns": ["annual_spend"],
        "rows": 1,
        "note": "a consumer spending about 32 times the consumers' median: usual for a business, "
        "implausible for its segment, and at no unit factor",
        "measure": f"SELECT count(*) FROM customers WHERE segment = 'consumer' AND annual_spend > {SPEND_FLOOR}",
    },
    {
        "table": "web_events",
        "type": "missing_values",
        "columns": ["referrer"],
        "rate": 0.65,
        "note": "referrer is NULL: high severity (>50%)",
        "measure": "SELECT count(*) FROM web_events WHERE referrer IS NULL",
    },
    {
        "table": "web_events",
        "type": "sentinel_values",
        "columns": ["duration_ms"],
        "rate": 0.015,
        "note": f"duration_ms is {NUMERIC_SENTINEL} where the duration was not recorded",
        "measure": f"SELECT count(*) FROM web_events WHERE duration_ms = {NUMERIC_SENTINEL}",
    },
    {
        "table": "web_events",
        "type": "rule_violations",
        "columns": ["referrer_kind", "referrer"],
        "rate": 0.004,
        "note": "referrer_kind is set wherever referrer is, but on a few referred events (where referrer is NULL, "
        "so is its kind: that is the referrer's missing value, not a defect of its own)",
        "measure": "SELECT count(*) FROM web_events WHERE referrer_kind IS NULL AND referrer IS NOT NULL",
    },
]


def rate(table: str, type_: str, column: str) -> float:
    return _find(table, type_, column)["rate"]


def rows(table: str, type_: str, column: str) -> int:
    return _find(table, type_, column)["rows"]


def _find(table: str, type_: str, column: str) -> dict[str, Any]:
    for d in DEFECTS:
        if d["table"] == table and d["type"] == type_ and column in d["columns"]:
            return d
    raise KeyError(f"no planted defect {type_} on {table}.{column}")


def answer_key() -> dict[str, Any]:
    defect_tables = {d["table"] for d in DEFECTS}
    tables = {name: {"clean": name in CLEAN_TABLES, "base_rows": TABLE_ROWS[name]} for name in TABLE_ROWS}
    assert defect_tables.isdisjoint(CLEAN_TABLES), "a clean table cannot hold defects"
    return {
        "description": "Defects planted in the demo database by cataloger_dagster.demo. "
        "'rate' is a fraction of the table's rows; 'rows' an exact count at any "
        "scale; 'measure' is SQL counting the affected rows.",
        "tables": tables,
        "defects": DEFECTS,
    }


def write_answer_key(path: Path = ANSWER_KEY_PATH) -> Path:
    path.write_text(json.dumps(answer_key(), indent=2) + "\n", encoding="utf-8")
    return path


def load_answer_key(path: Path = ANSWER_KEY_PATH) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))

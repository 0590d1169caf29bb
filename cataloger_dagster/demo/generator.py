"""A deterministic DuckDB demo database with planted data-quality defects.

Everything is drawn from one seeded numpy Generator in a fixed order, so the
same (seed, scale) gives byte-for-byte the same rows.  Defect rates and
counts come from `spec.DEFECTS`, the list `answer_key.json` is written from.
Defects are planted on disjoint row sets so that one defect never hides or
inflates another (a duplicated order line is never also an orphan).
"""

from __future__ import annotations

import unicodedata
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from cataloger_dagster.demo import spec

COUNTRIES = [
    # code, name, region, currency, standard VAT / sales-tax rate
    ("US", "United States", "Americas", "USD", 0.07),
    ("CA", "Canada", "Americas", "CAD", 0.05),
    ("MX", "Mexico", "Americas", "MXN", 0.16),
    ("BR", "Brazil", "Americas", "BRL", 0.17),
    ("AR", "Argentina", "Americas", "ARS", 0.21),
    ("CL", "Chile", "Americas", "CLP", 0.19),
    ("GB", "United Kingdom", "Europe", "GBP", 0.20),
    ("IE", "Ireland", "Europe", "EUR", 0.23),
    ("FR", "France", "Europe", "EUR", 0.20),
    ("DE", "Germany", "Europe", "EUR", 0.19),
    ("ES", "Spain", "Europe", "EUR", 0.21),
    ("IT", "Italy", "Europe", "EUR", 0.22),
    ("NL", "Netherlands", "Europe", "EUR", 0.21),
    ("BE", "Belgium", "Europe", "EUR", 0.21),
    ("SE", "Sweden", "Europe", "SEK", 0.25),
    ("NO", "Norway", "Europe", "NOK", 0.25),
    ("DK", "Denmark", "Europe", "DKK", 0.25),
    ("PL", "Poland", "Europe", "PLN", 0.23),
    ("CH", "Switzerland", "Europe", "CHF", 0.081),
    ("PT", "Portugal", "Europe", "EUR", 0.23),
    ("JP", "Japan", "Asia", "JPY", 0.10),
    ("KR", "South Korea", "Asia", "KRW", 0.10),
    ("IN", "India", "Asia", "INR", 0.18),
    ("SG", "Singapore", "Asia", "SGD", 0.09),
    ("CN", "China", "Asia", "CNY", 0.13),
    ("AU", "Australia", "Oceania", "AUD", 0.10),
    ("NZ", "New Zealand", "Oceania", "NZD", 0.15),
    ("ZA", "South Africa", "Africa", "ZAR", 0.15),
    ("NG", "Nigeria", "Africa", "NGN", 0.075),
    ("KE", "Kenya", "Africa", "KES", 0.16),
]
FIRST_NAMES = (
    "Olivia Liam Emma Noah Amelia Oliver Ava Elijah Sophia Lucas Mia Mateo Isabella Levi "
    "Charlotte Ezra Luna James Harper Asher Evelyn Leo Aria Henry Ella Jack Chloé Hugo Zoë "
    "Björn Aoife Siobhan Kenji Yuki Priya Arjun Fatima Omar Amara Kwame Ngozi Wei Mei José "
    "Lucía Mateus Ingrid Lars Greta Anouk"
).split()
LAST_NAMES = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez "
    "Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris "
    "Sánchez Müller Schmidt O'Brien Dubois Rossi Tanaka Suzuki Kim Park Patel Singh Okafor "
    "Mensah Nakamura Jensen Nilsson Kowalski Novak Silva Costa"
).split()
CITIES = (
    "London,Paris,Berlin,Madrid,Rome,Amsterdam,Dublin,Lisbon,Stockholm,Oslo,Copenhagen,Warsaw,"
    "Zürich,Toronto,Vancouver,Chicago,Boston,Seattle,Austin,Denver,Tokyo,Osaka,Seoul,Mumbai,"
    "Singapore,Sydney,Melbourne,Auckland,Johannesburg,Lagos,Nairobi,São Paulo,Montréal,Kraków"
).split(",")
EMAIL_DOMAINS = ("example.com", "mail.example.org", "example.net", "post.example.co.uk")
ADJECTIVES = (
    "Smart Classic Compact Deluxe Eco Ultra Portable Wireless Vintage Modern Rugged Premium "
    "Mini Pro Organic Silent Bright Cozy"
).split()
NOUNS = (
    "Lamp Kettle Speaker Backpack Notebook Blender Headphones Jacket Sneakers Tent Drone Puzzle "
    "Novel Serum Planter Watch Camera Toaster Yoga-Mat Skillet Hoodie Router Desk Chair Trowel"
).split()
SEGMENTS = ("consumer", "business", "enterprise")
SPEND_LEVEL = {"consumer": 600.0, "business": 6_000.0, "enterprise": 250_000.0}
PAYMENT_METHODS = ("card", "paypal", "bank_transfer", "gift_card")
EVENT_TYPES = ("page_view", "search", "add_to_cart", "checkout", "purchase")
DEVICES = ("mobile", "desktop", "tablet")
REFERRERS = (
    "https://www.google.com/",
    "https://duckduckgo.com/",
    "https://news.example.com/",
    "https://www.bing.com/",
    "https://social.example.net/feed",
)
STATUS_VARIANTS = ("Shipped", "SHIPPED", "canceled")
STATUS_PADDED = ("shipped ", " delivered")  # whitespace_values: the same statuses, untrimmed
CATEGORY_VARIANTS = ("electronics", "ELECTRONICS", "books", "Home & kitchen", "Home and Kitchen")
BAD_PHONES = ("555-01", "call after 5pm", "+1 555", "0", "tel: unknown", "+44 20 79460 12 34 5678 99")
CURRENCY_BY_COUNTRY = {c[0]: c[3] for c in COUNTRIES}


def create_demo_database(path: str | Path, *, seed: int = 7, scale: float = 1.0) -> dict[str, Any]:
    """Write the demo database to `path` (which must not exist) and describe it.

    Returns {"path", "seed", "scale", "tables": {name: row count}}.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(
            f"{path} already exists; the demo database is never written over an existing file. "
            "Delete it or choose another path."
        )
    if not scale > 0:
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    path.parent.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(seed)
    frames = build_tables(rng, scale)
    tmp = path.with_name(path.name + ".partial")
    tmp.unlink(missing_ok=True)
    try:
        con = duckdb.connect(str(tmp))
        try:
            for name, (df, types) in frames.items():
                _write(con, name, df, types)
        finally:
            con.close()
        tmp.rename(path)
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return {
        "path": str(path),
        "seed": seed,
        "scale": scale,
        "tables": {name: len(df) for name, (df, _) in frames.items()},
    }


def _write(con: duckdb.DuckDBPyConnection, name: str, df: pd.DataFrame, types: dict[str, str]) -> None:
    con.register("_frame", df)
    cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in types.items())
    con.execute(f'CREATE TABLE "{name}" AS SELECT {cols} FROM _frame')
    con.unregister("_frame")


def _n(base: int, scale: float, minimum: int) -> int:
    return max(minimum, int(round(base * scale)))


def _base_rows(table: str) -> int:
    """A generated table's rows at scale 1 (spec.TABLE_ROWS says None for the derived ones)."""
    base = spec.TABLE_ROWS[table]
    if base is None:
        raise ValueError(f"the demo derives {table}'s rows from other tables; it has no row count of its own")
    return base


def _count(rate: float, n: int) -> int:
    return max(1, int(round(rate * n)))


class _Picker:
    """Hands out disjoint random row sets, so planted defects never overlap."""

    def __init__(self, rng: np.random.Generator, n: int):
        self.order = rng.permutation(n)
        self.used = 0

    def take(self, k: int) -> np.ndarray:
        if self.used + k > len(self.order):
            raise ValueError("demo spec plants more defects than the table has rows")
        out = np.sort(self.order[self.used : self.used + k])
        self.used += k
        return out


def build_tables(rng: np.random.Generator, scale: float) -> dict[str, tuple[pd.DataFrame, dict[str, str]]]:
    countries = _countries()
    products = _products(rng, _n(_base_rows("products"), scale, 40))
    customers = _customers(rng, _n(_base_rows("customers"), scale, 200))
    orders, items = _orders(rng, _n(_base_rows("orders"), scale, 500), products[0], customers[0])
    events = _web_events(rng, _n(_base_rows("web_events"), scale, 2000), customers[0])
    return {
        "countries": countries,
        "products": products,
        "customers": customers,
        "orders": orders,
        "order_items": items,
        "web_events": events,
    }


def _countries():
    df = pd.DataFrame(COUNTRIES, columns=["country_code", "country_name", "region", "currency_code", "vat_rate"])
    return df, {
        "country_code": "VARCHAR",
        "country_name": "VARCHAR",
        "region": "VARCHAR",
        "currency_code": "VARCHAR",
        "vat_rate": "DOUBLE",
    }


def _products(rng, n):
    ids = np.arange(1, n + 1)
    names = (
        pd.Series(np.array(ADJECTIVES)[rng.integers(0, len(ADJECTIVES), n)])
        + " "
        + pd.Series(np.array(NOUNS)[rng.integers(0, len(NOUNS), n)])
    )
    category = np.array(spec.PRODUCT_CATEGORIES, dtype=object)[rng.integers(0, len(spec.PRODUCT_CATEGORIES), n)]
    price = np.clip(np.round(np.exp(rng.normal(3.4, 0.8, n)), 2), 1.99, 999.0)
    weight = np.round(rng.gamma(6.0, 0.25, n) + 0.2, 3).astype(object)
    active = rng.random(n) < 0.9
    # package lengths written "NN cm", some in inches or feet and inches (mixed units)
    length_cm = rng.integers(12, 90, n)
    package = np.array([f"{v} cm" for v in length_cm], dtype=object)

    pick = _Picker(rng, n)
    rows = pick.take(_count(spec.rate("products", "inconsistent_categories", "category"), n))
    category[rows] = np.array(CATEGORY_VARIANTS, dtype=object)[np.arange(len(rows)) % len(CATEGORY_VARIANTS)]
    # weight is missing independently of the category variants
    order = rng.permutation(n)
    missing = _count(spec.rate("products", "missing_values", "weight_kg"), n)
    weight[order[:missing]] = None
    # a few weights typed in grams (x1000), among the usual ones not missing
    present = order[missing:]
    middle = present[np.abs(weight[present].astype(float) - np.median(weight[present].astype(float))) < 0.3]
    grams = middle[: spec.rows("products", "scale_errors", "weight_kg")]
    weight[grams] = np.round(weight[grams].astype(float) * 1000, 1)
    imperial = rng.permutation(n)[: _count(spec.rate("products", "mixed_units", "package_length"), n)]
    package[imperial] = [
        f"{round(length_cm[r] / 2.54)} in"
        if j % 3 or length_cm[r] < 31
        else f"{int(length_cm[r] // 30.48)}'{round(length_cm[r] % 30.48 / 2.54)}\""
        for j, r in enumerate(imperial)
    ]
    # order quantities from the product's id, not the generator: the other tables' draws stay as they were
    min_qty = np.array([1, 2, 5, 10])[ids % 4]
    max_qty = np.array([20, 50, 100, 200])[(ids * 7 // 3) % 4]
    swapped = (np.arange(spec.rows("products", "rule_violations", "min_order_qty")) + 1) * n // 3
    min_qty[swapped], max_qty[swapped] = max_qty[swapped], min_qty[swapped].copy()

    df = pd.DataFrame(
        {
            "product_id": ids,
            "sku": [f"SKU-{i:05d}" for i in ids],
            "product_name": names,
            "category": category,
            "price_text": [f"{p:.2f}" for p in price],
            "weight_kg": weight,
            "package_length": package,
            "supplier": "Northwind Traders",
            "is_active": active,
            "min_order_qty": min_qty,
            "max_order_qty": max_qty,
        }
    )
    return df, {
        "product_id": "INTEGER",
        "sku": "VARCHAR",
        "product_name": "VARCHAR",
        "category": "VARCHAR",
        "price_text": "VARCHAR",
        "weight_kg": "DOUBLE",
        "package_length": "VARCHAR",
        "supplier": "VARCHAR",
        "is_active": "BOOLEAN",
        "min_order_qty": "INTEGER",
        "max_order_qty": "INTEGER",
    }


def _customers(rng, n):
    ids = np.arange(1, n + 1)
    first = np.array(FIRST_NAMES, dtype=object)[rng.integers(0, len(FIRST_NAMES), n)]
    last = np.array(LAST_NAMES, dtype=object)[rng.integers(0, len(LAST_NAMES), n)]
    domain = np.array(EMAIL_DOMAINS, dtype=object)[rng.integers(0, len(EMAIL_DOMAINS), n)]
    local = [_ascii(f"{given}.{family}").lower() + str(i) for given, family, i in zip(first, last, ids)]
    email = np.array([f"{lp}@{d}" for lp, d in zip(local, domain)], dtype=object)
    phone = np.array(
        [
            f"+{cc} {a} {b:04d} {c:04d}"
            for cc, a, b, c in zip(
                rng.choice([1, 44, 33, 49, 81], n),
                rng.integers(20, 999, n),
                rng.integers(0, 10_000, n),
                rng.integers(0, 10_000, n),
            )
        ],
        dtype=object,
    )
    city = np.array(CITIES, dtype=object)[rng.integers(0, len(CITIES), n)]
    country = np.array([c[0] for c in COUNTRIES], dtype=object)[rng.integers(0, len(COUNTRIES), n)]
    signup = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 1460, n), unit="D")
    segment = np.array(SEGMENTS, dtype=object)[rng.choice(3, n, p=[0.7, 0.25, 0.05])]
    opt_in = rng.random(n) < 0.4
    # what a customer spends a year: its segment sets the level (consumers hundreds, businesses
    # thousands, enterprises hundreds of thousands)
    level = np.array([SPEND_LEVEL[s] for s in segment])
    spend = np.round(level * np.exp(rng.normal(0.0, 0.45, n)), 2)
    # implausible values: a consumer spending about 32 times the consumers' median, no unit
    # factor away from it, and usual for the table as a whole (a business spends that)
    consumers = np.flatnonzero(segment == "consumer")
    odd = consumers[rng.permutation(len(consumers))[: spec.rows("customers", "implausible_values", "annual_spend")]]
    spend[odd] = np.round(np.median(spend[consumers]) * 10**1.5, 2)

    pick = _Picker(rng, n)
    dup = pick.take(_count(spec.rate("customers", "duplicate_keys", "email"), n))
    bad = pick.take(_count(spec.rate("customers", "invalid_format", "email"), n))
    originals = pick.take(len(dup))  # each duplicate copies a distinct, valid email
    email[dup] = email[originals]
    for j, r in enumerate(bad):
        lp = local[r]
        email[r] = (f"{lp}@", f"{lp}.{domain[r]}", f"{lp.replace('.', ' ')}@{domain[r]}", f"{lp}@@{domain[r]}")[j % 4]

    pick = _Picker(rng, n)
    missing = pick.take(_count(spec.rate("customers", "missing_values", "phone"), n))
    blanks = missing[: max(1, len(missing) // 13)]  # about 0.5% of rows: empty strings
    phone[missing] = None
    phone[blanks] = np.array(["", " "], dtype=object)[np.arange(len(blanks)) % 2]
    bad_phone = pick.take(_count(spec.rate("customers", "invalid_format", "phone"), n))
    phone[bad_phone] = np.array(BAD_PHONES, dtype=object)[np.arange(len(bad_phone)) % len(BAD_PHONES)]

    sentinel = _Picker(rng, n).take(_count(spec.rate("customers", "sentinel_values", "city"), n))
    city[sentinel] = np.array(spec.STRING_SENTINELS, dtype=object)[np.arange(len(sentinel)) % 3]

    df = pd.DataFrame(
        {
            "customer_id": ids,
            "first_name": first,
            "last_name": last,
            "email": email,
            "phone": phone,
            "city": city,
            "country_code": country,
            "signup_date": signup.strftime("%Y-%m-%d"),
            "segment": segment,
            "marketing_opt_in": opt_in,
            "annual_spend": spend,
        }
    )
    return df, {
        "customer_id": "INTEGER",
        "first_name": "VARCHAR",
        "last_name": "VARCHAR",
        "email": "VARCHAR",
        "phone": "VARCHAR",
        "city": "VARCHAR",
        "country_code": "VARCHAR",
        "signup_date": "VARCHAR",
        "segment": "VARCHAR",
        "marketing_opt_in": "BOOLEAN",
        "annual_spend": "DOUBLE",
    }


def _ascii(text: str) -> str:
    # email local parts drop accents and apostrophes, as most sign-up forms do
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if ch.isascii() and ch != "'")


def _orders(rng, n, products: pd.DataFrame, customers: pd.DataFrame):
    n_products, n_customers = len(products), len(customers)
    order_id = np.arange(1001, 1001 + n)
    customer_id = rng.integers(1, n_customers + 1, n)
    start = pd.Timestamp("2023-01-01")
    order_date = (start + pd.to_timedelta(rng.integers(0, 1095, n), unit="D")).to_numpy()
    status = np.array(spec.ORDER_STATUSES, dtype=object)[rng.choice(5, n, p=[0.1, 0.25, 0.5, 0.1, 0.05])]
    payment = np.array(PAYMENT_METHODS, dtype=object)[rng.choice(4, n, p=[0.6, 0.25, 0.1, 0.05])]
    country = customers["country_code"].to_numpy()[customer_id - 1]
    currency = np.array([CURRENCY_BY_COUNTRY[c] for c in country], dtype=object)

    # order lines: 1-4 distinct products per order (a fixed stride keeps them distinct)
    k = rng.choice([1, 2, 3, 4], n, p=[0.25, 0.35, 0.25, 0.15])
    line_order = np.repeat(np.arange(n), k)
    line_no = np.arange(len(line_order)) - np.repeat(np.cumsum(k) - k, k)
    first_product = rng.integers(0, n_products, n)
    product_idx = (first_product[line_order] + line_no * 7) % n_products
    quantity = rng.geometric(0.55, len(line_order)).clip(max=12)
    unit_price = products["price_text"].astype(float).to_numpy()[product_idx]
    total = np.round(np.bincount(line_order, weights=quantity * unit_price, minlength=n), 2)

    # orders: disjoint row sets for each defect
    pick = _Picker(rng, n)
    orphan = pick.take(_count(spec.rate("orders", "orphan_references", "customer_id"), n))
    customer_id[orphan] = n_customers + 1 + rng.permutation(max(len(orphan) * 3, 10))[: len(orphan)]
    future = pick.take(spec.rows("orders", "out_of_range", "order_date"))
    typo_years = np.array([2204, 2205, 2230, 2250])[np.arange(len(future)) % 4]
    order_date[future] = [np.datetime64(date(int(y), 1 + j % 12, 1 + j % 28)) for j, y in enumerate(typo_years)]
    outlier = pick.take(spec.rows("orders", "outliers", "total_amount"))
    total[outlier] = np.round(spec.OUTLIER_FLOOR * (1 + rng.random(len(outlier)) * 6), 2)
    variant = pick.take(_count(spec.rate("orders", "inconsistent_categories", "status"), n))
    status[variant] = np.array(STATUS_VARIANTS, dtype=object)[np.arange(len(variant)) % len(STATUS_VARIANTS)]
    padded = pick.take(_count(spec.rate("orders", "whitespace_values", "status"), n))
    status[padded] = np.array(STATUS_PADDED, dtype=object)[np.arange(len(padded)) % len(STATUS_PADDED)]
    reimported = pick.take(_count(spec.rate("orders", "duplicate_keys", "order_id"), n))

    orders = pd.DataFrame(
        {
            "order_id": order_id,
            "customer_id": customer_id,
            "order_date": order_date,
            "status": status,
            "payment_method": payment,
            "currency": currency,
            "total_amount": total,
        }
    )
    # a re-import carries the same order_id with a later status and a changed amount
    again = orders.iloc[reimported].copy()
    again["status"] = "delivered"
    again["total_amount"] = np.round(again["total_amount"] * 1.1 + 1.0, 2)
    orders = pd.concat([orders, again], ignore_index=True)
    orders = orders.iloc[rng.permutation(len(orders))].reset_index(drop=True)

    items = pd.DataFrame(
        {
            "order_id": order_id[line_order],
            "product_id": product_idx + 1,
            "quantity": quantity,
            "unit_price": unit_price,
        }
    )
    m = len(items)
    pick = _Picker(rng, m)
    orphan_items = pick.take(_count(spec.rate("order_items", "orphan_references", "order_id"), m))
    items.loc[orphan_items, "order_id"] = order_id[-1] + 1 + rng.permutation(len(orphan_items) * 4)[: len(orphan_items)]
    negative = pick.take(_count(spec.rate("order_items", "out_of_range", "quantity"), m))
    items.loc[negative, "quantity"] = -items.loc[negative, "quantity"]
    doubled = pick.take(_count(spec.rate("order_items", "duplicate_rows", "order_id"), m))
    items = pd.concat([items, items.iloc[doubled]], ignore_index=True)
    items = items.iloc[rng.permutation(len(items))].reset_index(drop=True)

    return (
        (
            orders,
            {
                "order_id": "INTEGER",
                "customer_id": "INTEGER",
                "order_date": "DATE",
                "status": "VARCHAR",
                "payment_method": "VARCHAR",
                "currency": "VARCHAR",
                "total_amount": "DOUBLE",
            },
        ),
        (items, {"order_id": "INTEGER", "product_id": "INTEGER", "quantity": "INTEGER", "unit_price": "DOUBLE"}),
    )


def _web_events(rng, n, customers: pd.DataFrame):
    n_sessions = max(10, n // 6)
    raw = rng.bytes(16 * n_sessions)
    session_uuid = np.array(
        [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, len(raw), 16)], dtype=object
    )
    session = np.sort(rng.integers(0, n_sessions, n))
    session_customer = rng.integers(1, len(customers) + 1, n_sessions)
    session_start = np.datetime64("2025-01-01T00:00:00") + rng.integers(0, 365 * 86400, n_sessions).astype(
        "timedelta64[s]"
    )
    step = np.cumsum(rng.integers(5, 300, n)).astype("timedelta64[s]")
    first_step = np.zeros(n_sessions, dtype="timedelta64[s]")
    firsts = np.r_[0, np.flatnonzero(np.diff(session)) + 1]
    first_step[session[firsts]] = step[firsts]
    event_time = session_start[session] + (step - first_step[session])
    event_type = np.array(EVENT_TYPES, dtype=object)[rng.choice(5, n, p=[0.6, 0.18, 0.12, 0.06, 0.04])]
    page = rng.integers(1, 800, n)
    section = np.array(["p", "c", "search", "cart", "help"], dtype=object)[rng.integers(0, 5, n)]
    url = pd.Series(section).radd("https://shop.example.com/") + "/" + pd.Series(page).astype(str)
    device = np.array(DEVICES, dtype=object)[rng.choice(3, n, p=[0.55, 0.38, 0.07])]
    duration = np.round(rng.gamma(2.0, 9000.0, n)).astype(np.int64) + 200
    referrer = np.array(REFERRERS, dtype=object)[rng.integers(0, len(REFERRERS), n)]

    pick = _Picker(rng, n)
    referrer[pick.take(_count(spec.rate("web_events", "missing_values", "referrer"), n))] = None
    duration[pick.take(_count(spec.rate("web_events", "sentinel_values", "duration_ms"), n))] = spec.NUMERIC_SENTINEL
    # the referrer's kind follows from the referrer, so it is NULL wherever the referrer is; and on
    # a few referred events it was never set (chosen without the generator, whose draws feed the
    # other columns)
    kinds = {
        url: "search"
        if any(s in url for s in ("google", "bing", "duckduckgo"))
        else "social"
        if "social" in url
        else "news"
        for url in REFERRERS
    }
    referrer_kind = np.array([None if r is None else kinds[r] for r in referrer], dtype=object)
    referred = np.flatnonzero(pd.notna(referrer))
    unset = _count(spec.rate("web_events", "rule_violations", "referrer_kind"), n)
    referrer_kind[referred[np.linspace(0, len(referred) - 1, unset).astype(int)]] = None

    df = pd.DataFrame(
        {
            "event_id": np.arange(1, n + 1, dtype=np.int64),
            "session_id": session_uuid[session],
            "customer_id": session_customer[session],
            "event_type": event_type,
            "event_time": event_time,
            "page_url": url,
            "referrer": referrer,
            "referrer_kind": referrer_kind,
            "device": device,
            "duration_ms": duration,
        }
    )
    return df, {
        "event_id": "BIGINT",
        "session_id": "VARCHAR",
        "customer_id": "INTEGER",
        "event_type": "VARCHAR",
        "event_time": "TIMESTAMP",
        "page_url": "VARCHAR",
        "referrer": "VARCHAR",
        "referrer_kind": "VARCHAR",
        "device": "VARCHAR",
        "duration_ms": "INTEGER",
    }

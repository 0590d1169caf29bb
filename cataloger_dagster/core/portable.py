"""Columns every stage can carry: as the database's own type where Arrow takes it, else as text.

Values leave the database through Arrow (the profile's sample rows, the sandbox's snapshot).
Some types have no Arrow form that ibis can build: DuckDB's month/day/nanosecond INTERVAL,
UNION and BIT; PostgreSQL's ranges, geometric types, inet/cidr, domains and enums (ibis
knows them only as "unknown"), unconstrained NUMERIC and money; and SQLite columns whose
values are of several storage classes.  Such a column is carried as its text, never dropped
silently and never the reason a table fails: `portable` says which columns were carried as
text and why, in a sentence for the reader.
"""

from __future__ import annotations

import logging

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pyarrow as pa
import sqlglot as sg

log = logging.getLogger(__name__)

# SQLite's storage classes a declared type's values are expected to have (its affinity).
_SQLITE_EXPECTED = {
    "integer": {"integer"},
    "boolean": {"integer"},
    "decimal": {"integer", "real"},
    "float": {"integer", "real"},
    "string": {"text"},
    "temporal": {"text"},
    "binary": {"blob"},
}
SQLITE_CLASSES = ("integer", "real", "text", "blob")


def compiles(backend, expr: ir.Expr) -> bool:
    """Whether the backend can write `expr` as its SQL (a seeded sample, an approximate
    aggregate): what one database offers, another refuses at compile time."""
    try:
        backend.compile(expr)
        return True
    except Exception:
        return False


@ibis.udf.scalar.builtin(name="typeof")
def _sqlite_typeof(x) -> str:  # type: ignore[empty-body]  # SQLite's own function: the storage class of one value
    ...


@ibis.udf.scalar.builtin(name="hex")
def _sqlite_hex(x) -> str:  # type: ignore[empty-body]  # SQLite's own function
    ...


# SQLite stores a NaN as NULL and MySQL cannot store one: a float column there holds no NaN
NO_NAN_BACKENDS = ("sqlite", "mysql")


def backend_name(table: ir.Table) -> str:
    backend = table.get_backend()
    return getattr(backend, "name", type(backend).__module__)


def type_text(dtype: dt.DataType) -> str:
    """The type as a person reads it: the database's own name for types ibis does not know."""
    if dtype.is_unknown():
        raw = getattr(dtype, "raw_type", None)
        kind = getattr(raw, "args", {}).get("kind") if raw is not None else None
        if kind is not None:
            return str(getattr(kind, "this", kind)).split(".")[-1]
        this = getattr(raw, "this", None)
        return str(getattr(this, "name", this) or "unknown").lower()
    return str(dtype).lstrip("!")


def text_reason(dtype: dt.DataType, backend: str) -> str | None:
    """Why a column of `dtype` is carried as text on `backend`, or None when Arrow carries it."""
    if dtype.is_unknown():
        return f"its type ({type_text(dtype)}) has no portable form"
    if dtype.is_interval():
        return "intervals of months, days and seconds have no portable form"
    if dtype.is_geospatial() or dtype.is_inet() or dtype.is_macaddr():
        return f"{type_text(dtype)} values have no portable form"
    if dtype.is_uuid() and backend != "duckdb":
        return "the driver gives UUIDs as objects Arrow does not take"
    if dtype.is_decimal() and dtype.precision is None and backend == "postgres":
        return "NUMERIC without a precision may hold more digits than Arrow's decimals"
    if dtype.is_nested():
        inner = (
            list(dtype.types)
            if dtype.is_struct()
            else [dtype.value_type]
            if dtype.is_array()
            else [dtype.key_type, dtype.value_type]
        )
        if any(text_reason(t, backend) for t in inner):
            return f"it holds values ({type_text(dtype)}) that have no portable form"
        if backend == "postgres":
            # psycopg gives multi-dimensional arrays as nested lists that ibis cannot type
            return None
    return None


def as_text(table: ir.Table, name: str) -> ir.StringValue:
    """A column's values as text, whatever their type (SQLite blobs as x'hex')."""
    x = table[name]
    backend = backend_name(table)
    if backend == "sqlite":
        return ibis.cases((_sqlite_typeof(x) == "blob", "x'" + _sqlite_hex(x) + "'"), else_=x.cast("string"))
    if x.type().is_string():
        # ibis drops a cast to the type it believes the column has; a PostgreSQL enum it
        # takes for text is made text by `|| ''` (there is no length() of an enum)
        return x.concat("")
    return x.cast("string")


def sqlite_expected(dtype: dt.DataType) -> set[str] | None:
    for key, test in (
        ("boolean", dtype.is_boolean),
        ("integer", dtype.is_integer),
        ("decimal", dtype.is_decimal),
        ("float", dtype.is_floating),
        ("string", dtype.is_string),
        ("temporal", dtype.is_temporal),
        ("binary", dtype.is_binary),
    ):
        if test():
            return _SQLITE_EXPECTED[key]
    return None


def sqlite_storage_metrics(table: ir.Table) -> dict[str, ir.Scalar]:
    """Aggregates counting each column's values per SQLite storage class (`sc{i}_{class}`)."""
    out = {}
    for i, (name, dtype) in enumerate(table.schema().items()):
        if sqlite_expected(dtype) is None:
            continue
        kind = _sqlite_typeof(table[name])
        out.update({f"sc{i}_{cls}": ibis.ifelse(kind == cls, 1, 0).sum() for cls in SQLITE_CLASSES})
    return out


def sqlite_mixed(table: ir.Table, counts: dict[str, int]) -> dict[str, dict[str, int]]:
    """Columns whose values are not all of the storage class their declared type implies,
    with their counts per class (from `sqlite_storage_metrics`' results)."""
    mixed = {}
    for i, (name, dtype) in enumerate(table.schema().items()):
        expected = sqlite_expected(dtype)
        if expected is None:
            continue
        found = {cls: int(counts.get(f"sc{i}_{cls}") or 0) for cls in SQLITE_CLASSES}
        if any(n and cls not in expected for cls, n in found.items()):
            mixed[name] = {cls: n for cls, n in found.items() if n}
    return mixed


def mixed_reason(dtype: dt.DataType, classes: dict[str, int]) -> str:
    held = ", ".join(f"{n:,} {cls}" for cls, n in classes.items())
    return f"its values are of several SQLite storage classes ({held}) although it is declared {type_text(dtype)}"


# columns counted per query: four counts each, and SQLite returns at most 2,000 columns
SQLITE_COLUMNS_PER_QUERY = 250


def sqlite_mixed_reasons(table: ir.Table) -> dict[str, str]:
    """{column: why} for the SQLite columns of mixed storage classes (one query per
    SQLITE_COLUMNS_PER_QUERY columns; {} elsewhere)."""
    if backend_name(table) != "sqlite":
        return {}
    reasons = {}
    for start in range(0, len(table.columns), SQLITE_COLUMNS_PER_QUERY):
        part = narrow(table, list(table.columns[start : start + SQLITE_COLUMNS_PER_QUERY]))
        metrics = sqlite_storage_metrics(part)
        if not metrics:
            continue
        counts = part.aggregate(**metrics).execute().iloc[0].to_dict()
        schema = part.schema()
        reasons.update({n: mixed_reason(schema[n], c) for n, c in sqlite_mixed(part, counts).items()})
    return reasons


def narrow(table: ir.Table, names: list[str]) -> ir.Table:
    """`table.select(*names)`, as cheap to compile as a table of those columns alone.

    ibis compiles every query against the whole width of the relation it starts from: on
    a table of 1,000 columns a one-column query took a quarter of a second to compile, and
    the checks that ask one per column took minutes.  The table as the database holds it is
    read through a query of the columns wanted (never `SELECT *`, which would bring the
    others back); a view over it (the MySQL types read differently) is rebuilt on that."""
    op = table.op()
    if isinstance(op, ops.DatabaseTable):
        schema = table.schema()
        backend = op.source
        query = sg.select(*(sg.column(n, quoted=True) for n in names)).from_(
            sg.table(op.name, db=op.namespace.database, catalog=op.namespace.catalog, quoted=True)
        )
        return backend.sql(
            query.sql(dialect=backend.compiler.dialect), schema=ibis.schema({n: schema[n] for n in names})
        )
    if isinstance(op, ops.Project) and isinstance(op.parent, ops.DatabaseTable):
        values = {n: op.values[n] for n in names}
        used = {f.name for v in values.values() for f in v.find(ops.Field) if f.rel == op.parent}
        base = narrow(op.parent.to_expr(), [n for n in op.parent.schema if n in used]).op()
        return ops.Project(base, {n: v.replace({op.parent: base}) for n, v in values.items()}).to_expr()
    return table.select(*names)


LEFT_OUT = "it could not be read even as text, so it is left out"


def portable(table: ir.Table, also: dict[str, str] | None = None) -> tuple[ir.Table, dict[str, str]]:
    """`table` with every column Arrow cannot carry turned to text; and {column: why}.

    `also` names more columns to carry as text (mixed SQLite columns, or found by trying);
    a column whose reason is LEFT_OUT is left out."""
    backend = backend_name(table)
    reasons = dict(also or {})
    for name, dtype in table.schema().items():
        if name not in reasons and (why := text_reason(dtype, backend)):
            reasons[name] = why
    if not reasons:
        return table, {}
    kept = [n for n in table.columns if reasons.get(n) != LEFT_OUT]
    return table.select(**{n: as_text(table, n) if n in reasons else table[n] for n in kept}), reasons


def retry_reasons(view: ir.Table, reasons: dict[str, str]) -> dict[str, str]:
    """After `view` (from `portable`) failed: the reasons with the columns that fail added
    (as text, or left out when they already were text)."""
    bad = failing_columns(view)
    return {**reasons, **{n: LEFT_OUT if n in reasons else why for n, why in bad.items()}}


def failing_columns(table: ir.Table, rows: int = 1000) -> dict[str, str]:
    """Columns whose first `rows` values Arrow cannot take as their type (one query each:
    only on the error path)."""
    bad = {}
    schema = table.schema()
    for name in table.columns:
        try:
            table.select(name).limit(rows).to_pyarrow()
        except Exception as exc:  # any driver or conversion error: the column goes as text
            log.debug("column %r cannot be read as %s: %s", name, schema[name], type(exc).__name__)
            bad[name] = f"its values ({type_text(schema[name])}) could not be read as that type"
    return bad


def read_arrow(
    table: ir.Table, limit: int | None = None, known: dict[str, str] | None = None
) -> tuple[pa.Table, dict[str, str]]:
    """The rows of `table` (the first `limit`) as Arrow, with the columns that need it as
    text; and {column: why}.  `known`: columns already known to need text (default: the
    mixed SQLite columns, found by one query)."""
    known = sqlite_mixed_reasons(table) if known is None else known
    view, reasons = portable(table, known)
    try:
        return (view.limit(limit) if limit is not None else view).to_pyarrow(), reasons
    except Exception:
        pass
    view, reasons = portable(table, retry_reasons(view, reasons))
    return (view.limit(limit) if limit is not None else view).to_pyarrow(), reasons

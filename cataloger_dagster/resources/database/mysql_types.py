"""MySQL's types that ibis misreads, given as the catalog can use them (`mysql_table`)."""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.datatypes as dt_
import ibis.expr.operations as ops

# MySQL's spatial types (information_schema's DATA_TYPE): ibis reads them as geospatial
# (which needs geoarrow and geopandas) or not at all; the catalog reads them as WKT text
MYSQL_SPATIAL = frozenset(
    {
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
        "geomcollection",
    }
)


@ibis.udf.scalar.builtin(name="ST_AsText")
def _st_as_text(geometry: bytes) -> str:  # type: ignore[empty-body]  # the database's function: never run here
    """MySQL's ST_AsText: the geometry as well-known text."""


def _exact_uint64(column: ibis.Column) -> ibis.Column:
    return column.cast(dt_.Decimal(precision=20, scale=0))


def mysql_table(conn: ibis.BaseBackend, table: ibis.Table) -> ibis.Table:
    """`table` with the MySQL types that ibis misreads given as the catalog can use them.

    * TINYINT(1), what MySQL makes of BOOLEAN: boolean, as in the other backends (read as
      numbers, flags get means and outliers instead of a true/false count).  Any other
      TINYINT stays an integer.
    * BIT(1): boolean; BIT(n): an integer (ibis would take the driver's bytes for one).
    * BIGINT UNSIGNED and BIT(64): DECIMAL(20, 0).  ibis reads MySQL results through pandas,
      where an integer column with NULLs becomes float64: values above 2**53 lose digits
      and those above 2**63 stop the snapshot ("Float value ... was truncated").
    * YEAR: a 16-bit integer (ibis's 8-bit one cannot hold 1901..2155).
    * SET: its text, 'red,blue' (ibis types it an array, which MySQL cannot query).
    * spatial types: their WKT text, POINT(1 2).
    """
    op = table.op()
    with conn.raw_sql(
        "SELECT column_name, data_type, column_type FROM information_schema.columns "
        "WHERE table_schema = DATABASE() AND table_name = %s",
        args=(op.name,),
    ) as cur:
        types = {name: (data_type.lower(), column_type.lower()) for name, data_type, column_type in cur.fetchall()}
    declared: dict[str, dt_.DataType] = {}
    shown: dict[str, Any] = {}  # column -> what shows its values, or None
    for name, dtype in table.schema().items():
        data_type, column_type = types.get(name, ("", ""))
        declared[name], shown[name] = dtype, None
        if column_type == "tinyint(1)":
            declared[name] = dt_.Boolean(nullable=dtype.nullable)
        elif data_type == "year":
            declared[name] = dt_.Int16(nullable=dtype.nullable)
        elif data_type == "set":
            declared[name] = dt_.String(nullable=dtype.nullable)
        elif data_type == "bit":
            declared[name] = dt_.Binary(nullable=dtype.nullable)
            shown[name] = (
                (lambda c: c.cast("uint64") != 0)
                if column_type == "bit(1)"
                else (_exact_uint64 if column_type == "bit(64)" else lambda c: c.cast("int64"))
            )
        elif data_type == "bigint" and "unsigned" in column_type:
            shown[name] = _exact_uint64
        elif data_type in MYSQL_SPATIAL:
            declared[name] = dt_.Binary(nullable=dtype.nullable)
            shown[name] = _st_as_text
    if all(declared[name] == dtype for name, dtype in table.schema().items()):
        return table
    raw = ops.DatabaseTable(op.name, schema=ibis.schema(declared), source=conn, namespace=op.namespace).to_expr()
    if not any(shown.values()):
        return raw
    return raw.select(**{name: show(raw[name]) if show else raw[name] for name, show in shown.items()})

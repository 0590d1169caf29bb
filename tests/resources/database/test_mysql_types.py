"""database/mysql_types.py: MySQL's types as the catalog reads them."""


import pytest

from cataloger_dagster.resources.database.resource import DatabaseResource


@pytest.mark.mysql
def test_mysql_flags_read_as_booleans_and_other_tinyints_as_numbers(scratch):
    import pyarrow as pa
    from backends import load_tables

    url = load_tables("mysql", {"t": pa.table({
        "active": pa.array([True, False, None]), "level": pa.array([1, 0, 7], pa.int8())})}, scratch)
    db = DatabaseResource(url=url)
    table = db.table("t")
    assert table.schema()["active"].is_boolean() and table.schema()["level"].is_int8()
    assert table.filter(table.active).count().execute() == 1
    assert table.order_by("level").to_pyarrow().to_pylist() == [
        {"active": False, "level": 0}, {"active": True, "level": 1}, {"active": None, "level": 7}]
    db.close()

import pytest

from session_checks import ORDERS_SQL, database


@pytest.fixture(scope="session")
def orders_db(tmp_path_factory):
    """The small shop of session_checks.ORDERS_SQL in a DuckDB file: 101 orders, 10 customers."""
    return database(tmp_path_factory.mktemp("orders") / "orders.duckdb", ORDERS_SQL)

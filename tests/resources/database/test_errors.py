"""database/errors.py: a database without tables is a DatabaseError that says what to check."""

import duckdb
import pytest

from cataloger_dagster.resources.database.errors import DatabaseError, NoTablesError
from cataloger_dagster.resources.database.resource import DatabaseResource


def test_a_database_without_tables_says_to_check_the_urls_database(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    db = DatabaseResource(url=f"duckdb://{path}")
    assert db.list_tables() == []
    error = db.no_tables_error()
    db.close()
    assert isinstance(error, NoTablesError) and isinstance(error, DatabaseError)
    assert str(error) == f"no tables in duckdb://{path}: nothing to catalog; check the URL's database/schema"
    with pytest.raises(DatabaseError, match="does not exist"):   # every error of the database is one kind
        DatabaseResource(url=f"duckdb://{tmp_path / 'missing.duckdb'}").list_tables()

"""For the writeback's tests: a real database of each kind holding one table with hostile names, typed columns with
defaults, and a store holding that table's understanding, for the writeback's tests."""

from __future__ import annotations

import pytest

from backends import load_tables
from cataloger_dagster.core.layout import UNDERSTANDING, table_prefix
from cataloger_dagster.core.models import ColumnSummaryModel, DatasetSummaryModel, DatasetUnderstandingModel
from cataloger_dagster.core.results import save_result
from cataloger_dagster.resources.database.comments import CommentSession
from cataloger_dagster.resources.store import LocalStore

TABLE = "it's \"odd\"; -- x"
ODD_COLUMN = "we\\ird \"col\"; `x`"
DATABASE = "wb"
# descriptions that are data in any dialect: quotes, a backslash, a newline, a ';' and a comment start
HOSTILE = "Each order's \"status\"; -- not SQL\nsecond line with a \\ backslash and 'quotes'"

DDL = {
    "duckdb": [
        f'CREATE TABLE "it\'s ""odd""; -- x" (id INTEGER NOT NULL, "we\\ird ""col""; `x`" VARCHAR DEFAULT \'n/a\', '
        "amount DECIMAL(10,2))",
    ],
    "postgres": [  # in the URL's schema, which the session reads as {schema}
        'CREATE TABLE "{schema}"."it\'s ""odd""; -- x" (id integer NOT NULL, "we\\ird ""col""; `x`" text DEFAULT \'n/a\', '
        "amount numeric(10,2))",
    ],
    "mysql": [
        "CREATE TABLE `it's \"odd\"; -- x` (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, "
        "`we\\ird \"col\"; ``x``` varchar(40) CHARACTER SET utf8mb4 NOT NULL DEFAULT 'it''s, (n/a)', "
        "amount decimal(10,2) DEFAULT 1.50, "
        "updated timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)",
    ],
}


def understanding(table_text: str = "One row per order.", column_text: str = HOSTILE) -> DatasetUnderstandingModel:
    return DatasetUnderstandingModel(
        summary=DatasetSummaryModel(name=TABLE, description=table_text, rowCount=0, columnCount=3, observations=[]),
        columns=[
            ColumnSummaryModel(name="id", dataType="numeric", description="The order's number.", sampleValues=[]),
            ColumnSummaryModel(name=ODD_COLUMN, dataType="string", description=column_text, sampleValues=[]),
            ColumnSummaryModel(name="gone", dataType="string", description="No longer in the table.", sampleValues=[]),
        ],
        suggested_context="",
    )


def store_understanding(store: LocalStore, model: DatasetUnderstandingModel) -> None:
    """A run of the table whose understanding is ``model``, as the catalog stores it."""
    prefix = table_prefix(DATABASE, TABLE)
    timestamp = store.open_run(prefix, f"run-{len(store.list_runs(prefix))}", TABLE)
    save_result(store, prefix, timestamp, UNDERSTANDING, model)


@pytest.fixture(params=["duckdb", pytest.param("postgres", marks=pytest.mark.postgres),
                        pytest.param("mysql", marks=pytest.mark.mysql)])
def commented(request, scratch, tmp_path):
    """(database URL, store holding the table's understanding) on each backend."""
    url = load_tables(request.param, {}, scratch)
    with CommentSession(url, writable=True) as admin:
        admin.execute([statement.replace('"{schema}"', f'"{admin.schema}"') for statement in DDL[request.param]])
    store = LocalStore(root=str(tmp_path / "store"))
    store_understanding(store, understanding())
    return url, store

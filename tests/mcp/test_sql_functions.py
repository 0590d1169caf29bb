"""The function allow-list: what it refuses on every dialect (SQL run from text, files, locks,
the server), and every analytical query the catalog's users write passing it."""

import pytest
from sql_policy_cases import ANALYTICAL, LEGITIMATE

from cataloger_dagster.mcp.sql_functions import NAMED, TYPED, allowed
from cataloger_dagster.mcp.sql_policy import check_sql

REFUSED_FUNCTIONS = {
    "postgres": [
        "SELECT ts_stat('SELECT to_tsvector(pg_read_file(''/etc/hostname''))')",
        "SELECT ts_rewrite('a & b'::tsquery, 'SELECT t, s FROM aliases')",
        "SELECT * FROM pg_create_physical_replication_slot('slot')",
        "SELECT pg_create_logical_replication_slot('slot', 'pgoutput')",
        "SELECT pg_try_advisory_lock_shared(1)",
        "SELECT pg_advisory_xact_lock(1)",
        "SELECT pg_stat_reset()",
        "SELECT pg_stat_reset_shared('bgwriter')",
        "SELECT pg_read_file('/etc/hostname')",
        "SELECT pg_catalog.pg_ls_dir('.')",
        "SELECT lo_import('/etc/hostname')",
        "SELECT lo_export(1, '/tmp/x')",
        "SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a int)",
        "SELECT query_to_xml('SELECT 1', true, true, '')",
        "SELECT set_config('search_path', 'x', false)",
        "SELECT current_setting('data_directory')",
        "SELECT pg_sleep(1)",
        "SELECT pg_terminate_backend(1)",
        "SELECT nextval('s')",
        "SELECT txid_current()",
        "SELECT pg_notify('c', 'x')",
        "SELECT pg_reload_conf()",
        "SELECT pg_logical_emit_message(true, 'p', 'x')",
        "SELECT pg_switch_wal()",
        "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL)",
    ],
    "duckdb": [
        "SELECT * FROM query('SELECT 1')",
        "SELECT * FROM query_table('orders')",
        "SELECT json_execute_serialized_sql('{}')",
        "SELECT * FROM json_execute_serialized_sql('{}')",
        "SELECT current_setting('memory_limit')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM sniff_csv('/etc/passwd')",
        "SELECT getenv('HOME')",
        "SELECT * FROM glob('/*')",
        "SELECT * FROM duckdb_settings()",
        "SELECT * FROM duckdb_secrets()",
        "SELECT * FROM postgres_scan('dbname=x', 'public', 't')",
        "SELECT * FROM pragma_database_list()",
        "SELECT * FROM sql_auto_complete('SEL')",
        "SELECT * FROM duckdb_logs()",
    ],
    "mysql": ["SELECT LOAD_FILE('/etc/passwd')", "SELECT GET_LOCK('a', 1)", "SELECT SLEEP(1)"],
    "sqlite": ["SELECT load_extension('/tmp/x.so')", "SELECT readfile('/etc/passwd')", "SELECT fts3_tokenizer('x')"],
}


@pytest.mark.parametrize("dialect,sql", [(d, s) for d, sqls in REFUSED_FUNCTIONS.items() for s in sqls])
def test_a_function_outside_the_allow_list_is_refused(dialect, sql):
    decision = check_sql(sql, dialect)
    assert not decision.allowed, sql
    assert "is not allowed" in decision.reason and "function" in decision.reason, decision.reason


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
def test_every_analytical_query_passes_the_allow_list(dialect):
    refused = [(sql, d.reason) for sql in ANALYTICAL["*"] + ANALYTICAL[dialect] + LEGITIMATE
               if not (d := check_sql(sql, dialect)).allowed]
    assert refused == []


def test_a_call_kept_as_written_is_judged_by_its_dialects_names():
    assert allowed("Anonymous", "median", "duckdb") and not allowed("Anonymous", "median", "sqlite")
    assert allowed("Anonymous", "jsonb_each", "postgres") and not allowed("Anonymous", "jsonb_each", "duckdb")
    # a name on no list, and a typed node sqlglot knows but the list does not hold
    assert not allowed("Anonymous", "query", "duckdb") and not allowed("ReadCSV", "read_csv", "duckdb")
    assert "Anonymous" not in TYPED and all(name == name.lower() for names in NAMED.values() for name in names)

"""Run capsules: appended one object each, read back by session or table, never a secret."""

from __future__ import annotations

import threading
import time

import pytest

from cataloger_dagster.mcp.capsules import CapsuleLog, Redactor
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.environment import secret_values

URL = "postgres://cataloger:s3cr%40t-pass@db.example:5432/shop?sslpassword=keypass99"


def test_the_redactor_hides_url_and_environment_secrets(monkeypatch):
    for name, value in {"ANTHROPIC_API_KEY": "sk-ant-123456", "HOME": "/home/someone", "PGPASSWORD": "pw",
                        "PWD": "/work/project"}.items():
        monkeypatch.setenv(name, value)
    redactor = Redactor(URL, secret_values())
    text = redactor.text(f"failed on {URL} with s3cr@t-pass and sk-ant-123456 in /home/someone")
    assert "s3cr" not in text and "keypass99" not in text and "sk-ant-123456" not in text
    assert "/home/someone" in text  # not a secret: left alone
    assert "/work/project" in redactor.text("ran in /work/project")  # the working directory ("PWD") neither
    assert redactor.text("pw is a short word") == "pw is a short word"  # too short to be hidden anywhere
    assert redactor.value({"a": ["x sk-ant-123456"], "sk-ant-123456": 1}) == {"a": ["x ***"], "***": 1}


def test_capsules_are_appended_and_read_back_by_session_and_table(tmp_path):
    store = LocalStore(root=str(tmp_path))
    log = CapsuleLog(store, "shop", Redactor(URL, ["tok-abcdef"]))
    one, two = "a" * 32, "b" * 32
    started = time.monotonic()
    log.record(one, "run_sql", started=started, arguments={"sql": "SELECT 'tok-abcdef'"}, summary="1 rows",
               policy={"allowed": True, "reason": "a read-only query", "dialect": "postgres"})
    log.record(one, "get_table", started=started, arguments={"table": "orders"}, summary="x", table="orders")
    log.record(two, "run_sql", started=started, arguments={"sql": "DROP TABLE orders"}, summary="refused",
               ok=False, error="refused", policy={"allowed": False, "reason": "DROP", "dialect": "postgres"})
    log.record(two, "execute_python", started=started, arguments={"code": "x" * 10_000, "table": "orders"},
               summary="cell 1 ok", table="orders")
    mine = log.read(session=one)
    assert [c.tool for c in mine] == ["run_sql", "get_table"]
    assert mine[0].input == {"sql": "SELECT '***'"} and mine[0].policy["allowed"] is True
    assert [c.session for c in log.read(table="orders")] == [one, two]
    assert len(log.read(table="orders")[1].input["code"]) < 5000  # a long input is cut, and says so
    files = list((tmp_path / "shop" / "mcp_capsules").rglob("*.json"))
    assert len(files) == 4 and not any("tok-abcdef" in f.read_text() for f in files)
    # the capsules' folder is no table of the database
    assert store.list_tables("shop") == []
    with pytest.raises(ValueError, match="session id"):
        log.read(session="../orders")


def test_concurrent_capsules_are_all_kept(tmp_path):
    log = CapsuleLog(LocalStore(root=str(tmp_path)), "shop", Redactor("duckdb://x.duckdb"))

    def write(n):
        for i in range(20):
            log.record("c" * 32, "list_tables", started=time.monotonic(), arguments={"n": n, "i": i}, summary="ok")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted((c.input["n"], c.input["i"]) for c in log.read(session="c" * 32)) == [
        (n, i) for n in range(4) for i in range(20)]

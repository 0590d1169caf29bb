"""Planted personal values never leave in clear: a catalog run with each agent (the Anthropic one
against the stand-in, every request captured), then the store, DAGSTER_HOME, the captured requests
and the output are searched for them."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from stdnum import luhn

from anthropic_standin import StandIn
from cataloger_dagster.cli.runner import catalog_database

EMAIL = "marguerite.planted@leaktest.example.org"
CARD = "4539" + "1488" + "0343" + "646"
CARD += luhn.calc_check_digit(CARD)
NATIONAL_ID = "536-90-4399"
API_KEY = "AKIA" + "PLANTEDLEAKTEST7"
PLANTED = (EMAIL, CARD, NATIONAL_ID, API_KEY)
KEY = "sk-ant-test-SECRET123"


def planted_database(path: Path) -> Path:
    """A table of people whose most frequent values are the planted ones (they would top every list)."""
    rows = []
    for i in range(400):
        plant = i % 5 == 0
        rows.append((
            i + 1,
            EMAIL if plant else f"person{i}@example.com",
            CARD if plant else "4000" + f"{i:011d}" + luhn.calc_check_digit("4000" + f"{i:011d}"),
            NATIONAL_ID if plant else f"{123 + i % 600:03d}-{11 + i % 80:02d}-{1001 + i:04d}",
            API_KEY if plant else f"AKIA{i:016d}".replace("0", "Q"),
            f"call about order {i}, reach me at {EMAIL}" if plant else f"order {i} delivered on time as planned",
            (i * 37) % 1000 / 10.0,
        ))
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE customers (customer_id INTEGER, email VARCHAR, card_number VARCHAR, "
                    "ssn VARCHAR, api_key VARCHAR, notes VARCHAR, amount DOUBLE)")
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return path


def leaks(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            for value in PLANTED:
                if value.encode() in data:
                    found.setdefault(value, []).append(str(p.relative_to(root)))
    return found


@pytest.fixture
def standin(monkeypatch):
    with StandIn() as s:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        yield s


@pytest.mark.slow
def test_planted_values_leave_with_neither_agent(standin, tmp_path, local_sandbox, capfd):
    db = planted_database(tmp_path / "people.duckdb")
    with duckdb.connect(str(db), read_only=True) as con:  # the values are there to leak
        assert con.execute("SELECT count(*) FROM customers WHERE email = ?", [EMAIL]).fetchone()[0] == 80
    store, home = tmp_path / "store", tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        for agent in ("heuristic", "anthropic"):
            report = catalog_database(database=f"duckdb://{db}", store=str(store), agent=agent, sandbox="local",
                                      exploration_rate=0.0, instance=instance, resume=False)
            assert not report.failed, [t.error for t in report.failed]
        schema = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("table_profile"), asset_partitions=["customers"]), limit=1
        ).records[0].asset_materialization.metadata["dagster/column_schema"].value
    tags = {c.name: c.tags for c in schema.columns}
    assert tags["email"] == {"pii": "", "sensitive/email": ""} and tags["amount"] == {}
    assert standin.requests, "the Anthropic agent sent nothing"
    profile = json.loads(next(store.rglob("profile.json")).read_text())
    classes = {c["name"]: {s["name"] for s in c["sensitive"]} for c in profile["columns"]}
    assert classes["email"] == {"email"} and classes["card_number"] == {"payment_card"}
    assert classes["ssn"] == {"national_id"} and classes["api_key"] == {"secret"} and "email" in classes["notes"]
    # visible: a badge on the page (card and dictionary), the classes in MCP's get_table
    page = next(store.rglob("catalog.html")).read_text()
    assert page.count('data-sensitive="payment_card"') >= 2 and 'data-sensitive="national_id"' in page
    from cataloger_dagster.mcp.catalog import Catalog
    from cataloger_dagster.resources.store import store_from_url

    table = Catalog(store_from_url(str(store)), "people.duckdb").table("customers")
    by_name = {c["name"]: c for c in table["profile"]["columns"]}
    assert [s["name"] for s in by_name["email"]["sensitive"]] == ["email"] and by_name["amount"]["sensitive"] == []
    out, err = capfd.readouterr()
    assert leaks(store) == {} and leaks(home) == {}
    sent = json.dumps(standin.requests) + json.dumps(standin.tool_results)
    assert [v for v in PLANTED if v in sent] == []
    assert [v for v in PLANTED if v in out + err] == []

"""Planted personal values never leave in clear: a catalog run with each agent (the Anthropic one
against the stand-in, every request captured) under the `hash` policy, a review of a finding, MCP
calls (run_sql selecting the planted columns under other names, execute_python printing them,
get_table) against the real `cataloger mcp`, and a webhook alert to a receiver on loopback; then
the store, DAGSTER_HOME, the captured requests, the MCP answers and the server's log, the alert
bodies and the output are searched for them."""

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
# a name proves no class by its shape: it is found by its column, and in a note by being a value
# the classifier saw in that column
NAME = "Marguerite Planteleak"
PLANTED = (EMAIL, CARD, NATIONAL_ID, API_KEY, NAME)
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Karen", "Tony")
LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Jones", "Hoare")
KEY = "sk-ant-test-SECRET123"


def planted_database(path: Path) -> Path:
    """A table of people whose most frequent values are the planted ones (they would top every list),
    with findings that quote rows: a repeated customer_id, rows entered twice."""
    rows = []
    for i in range(400):
        plant = i % 5 == 0
        rows.append((
            i if i % 10 == 9 else i + 1,
            EMAIL if plant else f"person{i}@example.com",
            CARD if plant else "4000" + f"{i:011d}" + luhn.calc_check_digit("4000" + f"{i:011d}"),
            NATIONAL_ID if plant else f"{123 + i % 600:03d}-{11 + i % 80:02d}-{1001 + i:04d}",
            API_KEY if plant else f"AKIA{i:016d}".replace("0", "Q"),
            NAME if plant else f"{FIRST[i % 10]} {LAST[i // 10 % 10]}",
            f"call about order {i}, reach me at {EMAIL}" if plant else f"order {i} delivered on time as planned",
            f"spoke with {NAME} about order {i}" if plant else f"left at the door, order {i}",
            (i * 37) % 1000 / 10.0,
        ))
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE customers (customer_id INTEGER, email VARCHAR, card_number VARCHAR, "
                    "ssn VARCHAR, api_key VARCHAR, full_name VARCHAR, notes VARCHAR, remark VARCHAR, amount DOUBLE)")
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows + rows[:50])
    return path


def in_text(text: str) -> list[str]:
    return [v for v in PLANTED if v.lower() in text.lower()]


def leaks(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            for value in PLANTED:
                if value.lower().encode() in data.lower():
                    found.setdefault(value, []).append(str(p.relative_to(root)))
    return found


@pytest.fixture
def standin(monkeypatch):
    with StandIn() as s:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        yield s


async def _mcp_answers(db: Path, store: Path, errlog) -> list[dict]:
    """The answers of the real `cataloger mcp` (stdio) to calls that reach for the planted values."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_support import server_command

    command, args, env = server_command(db, store)
    env["CATALOGER_SENSITIVE_VALUES"] = "hash"
    calls = [
        ("run_sql", {"sql": "SELECT email, card_number AS c, 'id ' || ssn AS who, api_key, full_name AS person, "
                            "notes, remark FROM customers WHERE customer_id % 5 = 1"}),
        ("run_sql", {"sql": "WITH p AS (SELECT upper(full_name) AS n, email FROM customers) "
                            "SELECT n || ' <' || email || '>' AS contact FROM p"}),
        ("execute_python", {"table": "customers", "code": (
            "import os, ibis\nt = ibis.connect(os.environ['DB_CONNECTION_STRING']).table('customers')\n"
            "df = t.limit(10).execute()\nprint(df.to_string())\nprint(df.full_name.tolist(), df.remark.tolist())")}),
        ("get_table", {"table": "customers"}),
        ("get_capsules", {}),
    ]
    answers = []
    async with stdio_client(StdioServerParameters(command=command, args=args, env=env), errlog=errlog) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            for tool, arguments in calls:
                result = await session.call_tool(tool, arguments)
                assert not result.isError, (tool, result.content[0].text)
                answers.append(json.loads(result.content[0].text))
    return answers


def _review_a_finding(db: Path, store: Path) -> str:
    from click.testing import CliRunner

    from cataloger_dagster.cli import main

    issues = json.loads(sorted(store.rglob("issues.json"))[-1].read_text())["issues"]
    assert issues, "the planted table has findings to review"
    finding = issues[0]["id"]
    result = CliRunner().invoke(main, ["review", "customers", finding, "--dismiss", "--note", "known and expected",
                                       "--database", f"duckdb://{db}", "--store", str(store)])
    assert result.exit_code == 0, result.output
    return result.output


def _alerts(instance, receiver, monkeypatch) -> list[dict]:
    from cataloger_dagster.sensors.alert_sensor import build_alert_sensor
    from cataloger_dagster.settings.factories import resources
    from cataloger_dagster.settings.model import load_settings

    monkeypatch.setenv("CATALOGER_ALERT_NOTIFIER", "webhook")
    monkeypatch.setenv("CATALOGER_ALERT_WEBHOOK_URL", receiver.url)
    monkeypatch.setenv("CATALOGER_ALERT_BACKOFF_S", "0")
    settings = load_settings()
    res = {k: v for k, v in resources(settings, sandbox="local").items() if k in ("store", "database", "notifier")}
    with dg.build_sensor_context(instance=instance, cursor=None, resources=res) as context:
        build_alert_sensor(settings).evaluate_tick(context)
    return receiver.received


@pytest.mark.slow
def test_planted_values_leave_by_no_path(standin, tmp_path, local_sandbox, capfd, monkeypatch):
    import anyio

    from receivers import http_receiver

    db = planted_database(tmp_path / "people.duckdb")
    with duckdb.connect(str(db), read_only=True) as con:  # the values are there to leak
        assert con.execute("SELECT count(*) FROM customers WHERE email = ?", [EMAIL]).fetchone()[0] == 90
    store, home = tmp_path / "store", tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("CATALOGER_SENSITIVE_VALUES", "hash")
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{db}")
    monkeypatch.setenv("CATALOGER_STORE", str(store))
    for name in ("CATALOGER_SENSITIVE_KEY", "CATALOGER_TABLE_OWNERS", "CATALOGER_NAME"):
        monkeypatch.delenv(name, raising=False)
    with dg.instance_for_test(temp_dir=str(home)) as instance, http_receiver() as receiver:
        for agent in ("heuristic", "anthropic"):
            report = catalog_database(database=f"duckdb://{db}", store=str(store), agent=agent, sandbox="local",
                                      exploration_rate=0.0, instance=instance, resume=False)
            assert not report.failed, [t.error for t in report.failed]
        schema = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("table_profile"), asset_partitions=["customers"]), limit=1
        ).records[0].asset_materialization.metadata["dagster/column_schema"].value
        reviewed = _review_a_finding(db, store)
        alerts = _alerts(instance, receiver, monkeypatch)
    tags = {c.name: c.tags for c in schema.columns}
    assert tags["email"] == {"pii": "", "sensitive/email": ""} and tags["amount"] == {}
    assert standin.requests, "the Anthropic agent sent nothing"
    profile = json.loads(next(store.rglob("profile.json")).read_text())
    classes = {c["name"]: {s["name"] for s in c["sensitive"]} for c in profile["columns"]}
    assert classes["email"] == {"email"} and classes["card_number"] == {"payment_card"}
    assert classes["ssn"] == {"national_id"} and classes["api_key"] == {"secret"} and "email" in classes["notes"]
    assert classes["full_name"] == {"person_name"} and classes["remark"] == set()
    # `hash`: the planted e-mail's digest under the catalog's own key, the same in every run
    from cataloger_dagster.core.sensitive.masking import protect
    from cataloger_dagster.resources.store import LocalStore

    key = LocalStore(root=str(store), sensitive_values="hash").value_key("people.duckdb")
    email = next(c for c in profile["columns"] if c["name"] == "email")
    assert protect(EMAIL, "hash", key) in [t["value"] for t in email["top_values"]]
    # visible: a badge on the page (card and dictionary), the classes in MCP's get_table
    page = next(store.rglob("catalog.html")).read_text()
    assert page.count('data-sensitive="payment_card"') >= 2 and 'data-sensitive="national_id"' in page

    with open(tmp_path / "mcp.log", "w") as errlog:
        answers = anyio.run(_mcp_answers, db, store, errlog)
    rows, contacts, printed, table = answers[0], answers[1], answers[2], answers[3]
    assert set(rows["sensitive_columns"]) == {"email", "c", "who", "api_key", "person", "notes"}
    assert len(rows["rows"]) == 90 and contacts["sensitive_columns"] == ["contact"]
    assert printed["ok"] and "customer_id" in printed["stdout"]
    by_name = {c["name"]: c for c in table["profile"]["columns"]}
    assert [s["name"] for s in by_name["email"]["sensitive"]] == ["email"] and by_name["amount"]["sensitive"] == []
    assert alerts, "the run raised no alert to send"

    out, err = capfd.readouterr()
    assert leaks(store) == {} and leaks(home) == {}
    assert in_text(json.dumps(standin.requests) + json.dumps(standin.tool_results)) == []
    assert in_text(json.dumps(answers)) == [] and in_text((tmp_path / "mcp.log").read_text()) == []
    assert in_text(json.dumps(alerts)) == [] and in_text(reviewed) == []
    assert in_text(out + err) == []

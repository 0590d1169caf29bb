"""`cataloger mcp` driven by the mcp SDK's own client, over stdio and over streamable HTTP:
every tool and resource on a store made by a real catalog run, state across execute_python
calls, policy refusals, no secret of the host in any answer, nothing left running afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import TABLE, server_command

from cataloger_dagster.core.layout import CAPSULES

API_KEY = "sk-ant-test-0123456789abcdef"
TOKEN = "tok3n-in-the-url-42"
MCP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
TOOLS = {"list_tables", "search_catalog", "get_table", "get_script", "run_sql", "execute_python", "save_script",
         "get_capsules"}


@pytest.fixture
def own_catalog(small_catalog, tmp_path):
    """The shared catalog with a store of its own: these tests save scripts and capsules."""
    import shutil

    shutil.copytree(small_catalog[1], tmp_path / "store")
    return small_catalog[0], tmp_path / "store"


def _command(small_catalog, *extra):
    database, store = small_catalog
    command, args, env = server_command(database, store, *extra)
    # a secret in the host's environment and one in the database URL: neither may show anywhere
    env["ANTHROPIC_API_KEY"] = API_KEY
    env["COLUMNS"] = "400"  # the server's log lines (rich) whole, so that a traceback's paths can be read
    args[args.index("--database") + 1] += f"?motherduck_token={TOKEN}"
    return command, args, env


def _data(result) -> dict:
    assert not result.isError, result.content[0].text
    return json.loads(result.content[0].text)


async def _refused(session: ClientSession, tool: str, arguments: dict) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.isError
    return result.content[0].text


async def _exercise(session: ClientSession, transcript: list[str]) -> list[str]:
    """Every tool and resource once (and some twice); the texts of all answers."""
    seen: list[str] = []

    async def call(tool: str, arguments: dict) -> dict:
        result = await session.call_tool(tool, arguments)
        seen.append(result.content[0].text)
        data = _data(result)
        transcript.append(f"→ {tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
        return data

    await session.initialize()
    assert {t.name for t in (await session.list_tools()).tools} == TOOLS
    uris = {str(r.uri) for r in (await session.list_resources()).resources}
    assert {"catalog://index", f"catalog://tables/{TABLE}/page", f"catalog://tables/{TABLE}/script"} <= uris

    tables = await call("list_tables", {})
    (entry,) = tables["tables"]
    assert entry["table"] == TABLE and entry["rows"] > 0 and entry["open_issues"] > 0 and entry["health"] > 0
    transcript.append(f"  {TABLE}: {entry['rows']} rows, {entry['open_issues']} open issues, health {entry['health']}")

    found = await call("search_catalog", {"query": "missing email"})
    assert any(r["kind"] == "issue" and "email" in r["ref"] for r in found["results"]), found
    transcript.append(f"  best hit: {found['results'][0]['kind']} {found['results'][0]['ref']}")

    table = await call("get_table", {"table": TABLE})
    assert table["issues"] and all(i["verdict"] for i in table["issues"])
    assert {c["name"] for c in table["profile"]["columns"]} >= {"id", "email", "age"}
    issue = next(i for i in table["issues"] if i["type"] == "missing_values")
    transcript.append(f"  {issue['id']}: {issue['verdict']} ({issue['reason']})")

    script = await call("get_script", {"table": TABLE, "which": "best"})
    assert "# block: setup" in script["code"] and script["metrics"]["pass_rate"] == 1.0
    latest = await call("get_script", {"table": TABLE, "which": "latest"})
    assert latest["timestamp"] == script["timestamp"]

    rows = await call("run_sql", {"sql": f"SELECT tier, count(*) AS n FROM {TABLE} GROUP BY tier ORDER BY tier"})
    assert rows["columns"] == ["tier", "n"] and sum(r[1] for r in rows["rows"]) == entry["rows"]
    transcript.append(f"  {rows['rows']}")
    refusal = await _refused(session, "run_sql", {"sql": f"WITH d AS (DELETE FROM {TABLE} RETURNING *) SELECT * FROM d"})
    assert "DELETE inside a CTE" in refusal
    transcript.append(f"→ run_sql(sql='WITH d AS (DELETE FROM {TABLE} RETURNING *) SELECT * FROM d')")
    transcript.append(f"  refused: {refusal.split('refused by the SQL policy: ')[-1]}")
    assert "read_csv" in await _refused(session, "run_sql", {"sql": "SELECT * FROM read_csv('/etc/passwd')"})
    seen.append(await _refused(session, "run_sql", {"sql": f"SELECT '{TOKEN}' AS t, no_such_column FROM {TABLE}"}))

    first = await call("execute_python", {"table": TABLE, "code": (
        "import os, ibis\nt = ibis.connect(os.environ['DB_CONNECTION_STRING']).table('members')\n"
        "n = int(t.count().execute())\nprint(n)")})
    assert first["ok"] and int(first["stdout"]) == entry["rows"]
    transcript.append(f"  {first['stdout'].strip()}")
    again = await call("execute_python", {"table": TABLE, "code": "print(n * 2, sorted(os.environ))"})
    assert again["ok"] and again["stdout"].startswith(str(entry["rows"] * 2))  # state persists
    assert "ANTHROPIC_API_KEY" not in again["stdout"]
    transcript.append(f"  {again['stdout'].strip()}")
    leak = await session.call_tool("execute_python", {"table": TABLE, "code": f"print({TOKEN!r})"})
    seen.append(leak.content[0].text)
    assert _data(leak)["stdout"].strip() == "***"  # a secret typed in the code does not come back either

    saved = await call("save_script", {"table": TABLE})
    assert saved["metrics"]["cells"] == 3 and saved["metrics"]["source"] == "mcp"
    transcript.append(f"  saved {saved['timestamp']} (pass rate {saved['metrics']['pass_rate']})")

    capsules = await call("get_capsules", {})
    tools = [c["tool"] for c in capsules["capsules"]]
    assert tools[:3] == ["list_tables", "search_catalog", "get_table"] and tools.count("run_sql") == 4
    refused = [c for c in capsules["capsules"] if c["tool"] == "run_sql" and not c["ok"]]
    assert refused[0]["policy"]["allowed"] is False and "DELETE" in refused[0]["policy"]["reason"]
    assert all(c["seconds"] >= 0 and c["summary"] for c in capsules["capsules"])
    by_table = await call("get_capsules", {"table": TABLE})
    assert {c["tool"] for c in by_table["capsules"]} >= {"get_table", "execute_python", "save_script"}
    assert all(c["table"] == TABLE for c in by_table["capsules"])
    transcript.append(f"  {len(capsules['capsules'])} capsules: {', '.join(dict.fromkeys(tools))}")

    page = await session.read_resource(f"catalog://tables/{TABLE}/page")
    assert "<html" in page.contents[0].text.lower()
    best = await session.read_resource(f"catalog://tables/{TABLE}/script")
    assert "# block: setup" in best.contents[0].text
    index = await session.read_resource("catalog://index")
    assert TABLE in index.contents[0].text
    return seen


def _no_secret(texts: list[str], store: Path) -> None:
    on_disk = [p.read_text() for p in store.rglob("*.json") if CAPSULES in p.parts]
    assert on_disk
    for text in texts + on_disk:
        assert API_KEY not in text and TOKEN not in text


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.slow
def test_stdio(own_catalog):
    small_catalog = own_catalog
    command, args, env = _command(small_catalog)
    before = _descendants()
    transcript: list[str] = []
    started: set[int] = set()

    async def main():
        async with stdio_client(StdioServerParameters(command=command, args=args, env=env)) as (read, write):
            async with ClientSession(read, write) as session:
                seen = await _exercise(session, transcript)
                started.update(_descendants() - before)
        return seen

    seen = anyio.run(main)
    _no_secret(seen, small_catalog[1])
    assert len(started) >= 2  # the server and its sandbox
    gone, alive = psutil.wait_procs([psutil.Process(p) for p in started if psutil.pid_exists(p)], timeout=15)
    assert alive == []
    if os.environ.get("CATALOGER_WRITE_MCP_TRANSCRIPT"):
        Path(os.environ["CATALOGER_WRITE_MCP_TRANSCRIPT"]).write_text("\n".join(transcript) + "\n")
    # docs/mcp.md's transcript is this session's (timestamps and counts aside)
    shown = [line for line in MCP_PAGE.read_text().split("<!-- mcp-transcript -->")[1].splitlines()
             if line.startswith("→")]
    assert shown == [line for line in transcript if line.startswith("→")][:len(shown)] and len(shown) >= 8


@pytest.mark.slow
def test_streamable_http(own_catalog):
    small_catalog = own_catalog
    from e2e_support import free_port, wait_for

    port = free_port()
    command, args, env = _command(small_catalog, "--http", f"127.0.0.1:{port}")
    server = subprocess.Popen([command, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        process = psutil.Process(server.pid)

        def listening():
            return any(c.laddr.port == port for c in process.net_connections() if c.status == "LISTEN") or None

        wait_for("the MCP server to listen", listening, timeout=120, every=0.5)
        sandboxes: set[int] = set()

        async def main():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _):
                async with ClientSession(read, write) as session:
                    seen = await _exercise(session, [])
                    sandboxes.update(p.pid for p in process.children(recursive=True))
            return seen

        seen = anyio.run(main)
        _no_secret(seen, small_catalog[1])
        assert sandboxes
        # the client said goodbye (its session was deleted): its sandboxes stop, the server stays up
        deadline = time.monotonic() + 20
        while process.children(recursive=True) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert process.children(recursive=True) == [] and server.poll() is None
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    stderr = server.stderr.read().decode(errors="replace")
    assert API_KEY not in stderr and TOKEN not in stderr
    # (the SDK itself logs a ClosedResourceError of its "standalone SSE writer" when a client
    # deletes its session: its noise, not a failure of ours)
    assert "cataloger_dagster" not in stderr, stderr[:3000]


@pytest.mark.slow
def test_run_sql_holds_against_an_attacker_through_the_sdk(own_catalog):
    """What an attacker sent through the SDK's client: the string-escape smuggle of a SET, SQL run
    from text, rows of 1 MB.  Refused, refused, cut at the byte limit; the server stays usable."""
    command, args, env = _command(own_catalog, "--byte-limit", "3000000")

    async def main():
        async with stdio_client(StdioServerParameters(command=command, args=args, env=env)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                smuggle = r"SELECT E'\\', 'x; SET memory_limit=$$1MB$$; SELECT 1 --'"
                answers = [await _refused(session, "run_sql", {"sql": smuggle})]
                for sql in ("SELECT * FROM query('SELECT 42')", "SELECT json_execute_serialized_sql('{}')"):
                    answers.append(await _refused(session, "run_sql", {"sql": sql}))
                big = _data(await session.call_tool("run_sql", {
                    "sql": "SELECT i, repeat('x', 1000000) AS s FROM range(50) t(i) ORDER BY i"}))
                count = _data(await session.call_tool("run_sql", {"sql": f"SELECT count(*) AS n FROM {TABLE}"}))
                return answers, big, count

    answers, big, count = anyio.run(main)
    assert "exactly as written" in answers[0]
    assert all("is not allowed" in a for a in answers[1:]), answers
    assert big["truncated"] and big["truncated_by"] == "bytes" and 2 <= len(big["rows"]) <= 3
    assert count["rows"] == [[65]]

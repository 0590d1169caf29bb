"""`cataloger mcp`: the catalog as an MCP server (the official `mcp` SDK's FastMCP).

Tools: list_tables, search_catalog, get_table, get_script, run_sql (read-only, under the parsed
SQL policy), execute_python (one persistent sandbox session per table, whose state lasts across calls),
save_script and get_capsules.  Resources: the index, every table's catalog page and best script.

State per client: the MCP lifespan runs once per client session (stdio: the process;
streamable HTTP: each MCP session), so each client has its own session id, its own sandboxes,
and its sandboxes stop when it disconnects.  Every tool call is kept as a run capsule.
"""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Optional
from urllib.parse import quote, unquote

from cataloger_dagster.resources.extras import missing_extra

try:  # the MCP SDK and its async library, both of the mcp extra
    import anyio
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import Resource as MCPResource
except ImportError as exc:
    raise missing_extra("mcp", "`cataloger mcp`") from exc

from cataloger_dagster.core.redaction import Redactor
from cataloger_dagster.mcp.capsules import CapsuleLog
from cataloger_dagster.mcp.catalog import Catalog, CatalogError
from cataloger_dagster.mcp.search import SearchIndex
from cataloger_dagster.mcp.sensitive_results import KNOWN_PER_COLUMN, SensitiveResults
from cataloger_dagster.mcp.sessions import PythonSessions
from cataloger_dagster.mcp.sql_run import DEFAULT_BYTE_LIMIT, QueryError, QueryRunner
from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource
from cataloger_dagster.resources.store import CatalogStore

INSTRUCTIONS = """\
A data catalog of one database. Start with list_tables or search_catalog, then get_table for a
table's understanding, issues (with the evidence and verdict of their investigation) and reviews.
run_sql runs one read-only SELECT/WITH query (row, byte and time limits apply). execute_python
runs Python in a sandbox over a read-only snapshot of one table (ibis.connect(os.environ
["DB_CONNECTION_STRING"]) reaches it); its state persists between calls. get_script shows the
catalog's stored investigation scripts; save_script keeps your session as a script of the table,
marked as yours (origin "mcp", this session): the catalog never ranks it or runs it, since its
verdicts are what your code printed. Every call is recorded (get_capsules)."""

# errors a tool reports to the client as they are (their messages say what to do)
EXPECTED = (CatalogError, QueryError, DatabaseError, SandboxError, LookupError, ValueError)


@dataclass
class Service:
    """What every client shares: the database, the store, the sandbox, the index, the capsules."""

    database: DatabaseResource
    store: CatalogStore
    sandbox: SandboxResource
    row_limit: int = 1000
    sql_timeout_s: float = 30.0
    sql_byte_limit: int = DEFAULT_BYTE_LIMIT
    allow_superuser_sql: bool = False  # run_sql over a PostgreSQL superuser connection
    secrets: tuple[str, ...] = ()  # values to keep out of every capsule (settings.secret_values())

    def __post_init__(self) -> None:
        self.name = self.database.database_name
        self.catalog = Catalog(self.store, self.name)
        self.index = SearchIndex(self.catalog)
        # the store's policy and key: a digest here is the one the pages show
        self.values = self.store.value_policy(self.name)
        self.redactor = Redactor(self.database.url, self.secrets, self.values)
        self.sensitive = SensitiveResults(self.catalog, self.values, self._distinct_values)
        self.capsules = CapsuleLog(self.store, self.name, self.redactor)
        self.db_lock = threading.Lock()
        self.runner = QueryRunner(
            self.database,
            row_limit=self.row_limit,
            timeout_s=self.sql_timeout_s,
            byte_limit=self.sql_byte_limit,
            lock=self.db_lock,
            allow_superuser=self.allow_superuser_sql,
        )

    def _distinct_values(self, table: str, column: str) -> list:
        with self.db_lock:
            t = self.database.table(table)
            return t.select(column).distinct().limit(KNOWN_PER_COLUMN).to_pyarrow().column(0).to_pylist()

    def close(self) -> None:
        self.database.close()


@dataclass
class Client:
    """One client's state, for the length of its MCP session."""

    session_id: str
    python: PythonSessions


def _summary(tool: str, result: Any) -> str:
    if tool == "list_tables":
        return f"{len(result['tables'])} tables"
    if tool == "search_catalog":
        return f"{len(result['results'])} results"
    if tool == "get_table":
        return f"{result['table']}: {len(result['issues'])} issues, run {result['run']}"
    if tool == "get_script":
        return f"script {result['timestamp']}" if result.get("timestamp") else "no script"
    if tool == "run_sql":
        cut = f" (cut at the {result['truncated_by']} limit)" if result["truncated"] else ""
        return f"{len(result['rows'])} rows{cut}, {len(result['columns'])} columns"
    if tool == "execute_python":
        state = "ok" if result["ok"] else f"failed: {(result['error'] or {}).get('type', 'error')}"
        return f"cell {result['cell']} {state}, {len(result['stdout'])} characters of output"
    if tool == "save_script":
        m = result["metrics"]
        return f"saved {result['timestamp']}: pass rate {m['pass_rate']:.2f}, coverage {m['coverage']:.2f}"
    if tool == "get_capsules":
        return f"{len(result['capsules'])} capsules"
    return ""


class CatalogMCP(FastMCP):
    """FastMCP whose resource list is the store's tables as they are now."""

    service: Service

    async def list_resources(self) -> list[MCPResource]:
        fixed = await super().list_resources()
        tables = await anyio.to_thread.run_sync(self.service.catalog.tables)
        for table in tables:
            name = quote(table, safe="")
            # the SDK's model validates the text into its URL type
            fixed.append(
                MCPResource(
                    uri=f"catalog://tables/{name}/page",  # type: ignore[arg-type]
                    name=f"{table} catalog page",
                    mimeType="text/html",
                )
            )
            fixed.append(
                MCPResource(
                    uri=f"catalog://tables/{name}/script",  # type: ignore[arg-type]
                    name=f"{table} best script",
                    mimeType="text/x-python",
                )
            )
        return fixed


def build_server(service: Service, *, host: str = "127.0.0.1", port: int = 8000) -> CatalogMCP:
    @asynccontextmanager
    async def lifespan(_server: FastMCP) -> AsyncIterator[Client]:
        client = Client(
            uuid.uuid4().hex,
            PythonSessions(
                service.sandbox,
                service.database,
                service.catalog,
                service.redactor,
                service.db_lock,
                service.sensitive,
            ),
        )
        try:
            yield client
        finally:
            # the client has gone (stdio closed, HTTP session deleted or idle): its sandboxes stop
            await anyio.to_thread.run_sync(client.python.close)

    server = CatalogMCP(
        "cataloger", instructions=INSTRUCTIONS, lifespan=lifespan, host=host, port=port, log_level="WARNING"
    )
    server.service = service

    async def call(
        ctx: Context, tool: str, arguments: dict, work: Callable[[Client], Any], *, table: Optional[str] = None
    ) -> Any:
        """Runs one tool in a worker thread, keeps its capsule, and hands back a redacted result."""
        client: Client = ctx.request_context.lifespan_context
        started = time.monotonic()
        policy = None
        try:
            outcome = await anyio.to_thread.run_sync(work, client)
            if isinstance(outcome, tuple):  # run_sql: (result, the policy's decision)
                outcome, policy = outcome
            result = service.redactor.value(outcome)
        except Exception as exc:
            policy = getattr(exc, "policy", policy)
            expected = isinstance(exc, EXPECTED)
            message = service.redactor.text(str(exc) if expected else f"{type(exc).__name__}: {exc}")
            await anyio.to_thread.run_sync(
                lambda: service.capsules.record(
                    client.session_id,
                    tool,
                    started=started,
                    arguments=arguments,
                    summary="refused" if policy else "failed",
                    ok=False,
                    error=message,
                    table=table,
                    policy=policy,
                )
            )
            raise ToolError(message) from None
        await anyio.to_thread.run_sync(
            lambda: service.capsules.record(
                client.session_id,
                tool,
                started=started,
                arguments=arguments,
                summary=_summary(tool, result),
                table=table,
                policy=policy,
            )
        )
        return result

    @server.tool()
    async def list_tables(ctx: Context) -> dict:
        """Every catalogued table with its rows, health (0-100) and open issue counts."""
        return await call(
            ctx, "list_tables", {}, lambda c: {"database": service.name, "tables": service.catalog.summary()}
        )

    @server.tool()
    async def search_catalog(query: str, ctx: Context, limit: int = 20) -> dict:
        """Full-text search over table and column names, descriptions, issues and the evidence of
        their investigations. Words match as prefixes; all words must match."""
        return await call(
            ctx,
            "search_catalog",
            {"query": query, "limit": limit},
            lambda c: {"query": query, "results": service.index.search(query, limit)},
        )

    @server.tool()
    async def get_table(table: str, ctx: Context) -> dict:
        """One table: its understanding, profile summary, issues with evidence and verdicts,
        reviews, and links to its page and scripts."""
        return await call(ctx, "get_table", {"table": table}, lambda c: service.catalog.table(table), table=table)

    @server.tool()
    async def get_script(table: str, ctx: Context, which: str = "best") -> dict:
        """A stored investigation script of the table: which = best (the one the next run starts
        from), latest, or a run timestamp such as 2026-01-02T03:04:05.000000Z."""

        def work(c):
            found = service.catalog.script(table, which)
            if found is None:
                raise CatalogError(f"table {table!r} has no stored script yet")
            return found

        return await call(ctx, "get_script", {"table": table, "which": which}, work, table=table)

    @server.tool()
    async def run_sql(sql: str, ctx: Context) -> dict:
        """Run one read-only SQL query (SELECT or WITH ... SELECT, in the database's dialect).
        Writes, session changes, and functions outside the allow-list (file, network, server or
        SQL-as-text functions) are refused with the reason; a row limit, a byte limit and a
        statement timeout apply (the reply says "truncated" and which limit cut it)."""

        def work(c):
            decision = service.runner.check(sql)
            if not decision.allowed:
                error = QueryError(f"refused by the SQL policy: {decision.reason}")
                error.policy = decision.as_dict()
                raise error
            result = service.runner.run(decision)
            return service.sensitive.result(result, decision.sql or sql, decision.dialect), decision.as_dict()

        return await call(ctx, "run_sql", {"sql": sql}, work)

    @server.tool()
    async def execute_python(code: str, table: str, ctx: Context) -> dict:
        """Run Python in a persistent sandbox session over a read-only snapshot of `table`
        (variables survive between calls; one session per table). The snapshot is reached with
        ibis.connect(os.environ["DB_CONNECTION_STRING"]) and holds the table under its own name.
        No network; no credentials."""
        return await call(
            ctx, "execute_python", {"code": code, "table": table}, lambda c: c.python.execute(table, code), table=table
        )

    @server.tool()
    async def save_script(table: str, ctx: Context) -> dict:
        """Keep this session's execute_python cells over `table` as a script of the table, marked
        origin "mcp" with this session's id, with metrics (the issues its record(...) calls
        decided, as printed: a claim, not the catalog's finding). The catalog never ranks it,
        starts a run from it or runs it; get_script(table, which=<its timestamp>) shows it."""
        return await call(
            ctx, "save_script", {"table": table}, lambda c: c.python.save(table, c.session_id), table=table
        )

    @server.tool()
    async def get_capsules(ctx: Context, table: Optional[str] = None, session: Optional[str] = None) -> dict:
        """The run capsules (one per tool call: tool, input, result summary, duration, policy
        decision) of a session (default: this one) or of every session that touched `table`."""

        def work(c):
            wanted = session or (None if table else c.session_id)
            found = service.capsules.read(session=wanted, table=table)
            return {"session": c.session_id, "capsules": [x.model_dump(mode="json") for x in found]}

        return await call(ctx, "get_capsules", {"table": table, "session": session}, work, table=table)

    @server.resource(
        "catalog://index",
        name="index",
        mime_type="text/html",
        description="The catalog's index page: every table with its health",
    )
    def index_page() -> str:
        return service.catalog.index() or "<p>No index yet: run `cataloger run`.</p>"

    @server.resource(
        "catalog://tables/{table}/page", mime_type="text/html", description="A table's latest catalog page"
    )
    def table_page(table: str) -> str:
        name = unquote(table)
        page = service.catalog.page(name)
        if page is None:
            raise CatalogError(f"table {name!r} has no catalog page yet")
        return page

    @server.resource(
        "catalog://tables/{table}/script",
        mime_type="text/x-python",
        description="A table's best investigation script (the one the next run starts from)",
    )
    def table_script(table: str) -> str:
        name = unquote(table)
        found = service.catalog.script(name, "best")
        if found is None:
            raise CatalogError(f"table {name!r} has no stored script yet")
        return service.redactor.text(found["code"])

    return server


def serve(service: Service, *, http: Optional[str] = None) -> None:
    """Serve on stdio (the default) or streamable HTTP at HOST:PORT."""
    try:
        if http is None:
            build_server(service).run("stdio")
            return
        host, _, port = http.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--http {http!r}: give HOST:PORT, such as 127.0.0.1:8765")
        build_server(service, host=host.strip("[]"), port=int(port)).run("streamable-http")
    finally:
        service.close()

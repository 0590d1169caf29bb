"""Table and column names that try to become code never do.

A database whose names carry line breaks of every kind Python or `str.splitlines`
knows, quotes, backslashes, triple quotes and `__import__` payloads is catalogued
twice (the second run reuses the first run's scripts), with a second table of the
same columns so that a script is carried over to a similar table.  Every cell the
sandbox ran and every script stored is then read with Python's own tokenizer and
ast, and run by hand on the host as docs/feedback-loop.md says: no payload may run anywhere.

Left out, because the stack refuses them before any code is written: NUL in a name
(DuckDB rejects it in a quoted identifier) and line breaks, tabs or '...' in a
*table* name (Dagster refuses them in a partition key); column names carry those.
'/' and '..' (names that break paths) are tested with the store.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import tokenize
import uuid
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from anthropic_standin import StandIn
from cataloger_dagster.core.investigate.codegen import comment_id, literal
from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.core.investigate.code import CHECKS, parse_records, setup_block
from cataloger_dagster.core.investigate.investigator import PreviousScript, run_investigations
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.base import SandboxRuntime
from cataloger_dagster.cli.runner import catalog_database

MARK = f"pwned-{uuid.uuid4().hex[:12]}"
TMP = Path("/tmp")


def payload(tag: str) -> str:
    """Code that makes /tmp/<MARK>-<tag> if it ever runs (no '/' or '..': those are path tests)."""
    return f"__import__('os').mkdir(chr(47).join(['', 'tmp', '{MARK}-{tag}']))"


COLUMNS = {
    "id": "INTEGER",
    f"note\n{payload('newline')}\n#": "VARCHAR",                          # the audit's column
    f"u\u2028{payload('line-separator')}\u2029#": "VARCHAR",             # splitlines breaks, Python does not
    f"cr\r{payload('carriage-return')}\r#": "VARCHAR",
    f"ff\x0c{payload('form-feed')}\x0b\x1c\x85#": "VARCHAR",
    f"q'''\"\"\"\\'\\\"{payload('quotes')}": "VARCHAR",
    f"x\n# block: setup\n{payload('forged-marker')}": "VARCHAR",
    f"cat\n{payload('category')}": "VARCHAR",
}
TABLES = [
    f"people\u2028{payload('table-ls')}\u2029#'\"\\'''\"\"\"",
    f"people_copy\x01a\"\\'; {payload('table-quote')} #",   # \' and a control character: retarget_setup
]
VALUES = [f"Open\u2028{payload('value')}", f"open\u2028{payload('value')}", f"OPEN\u2028{payload('value')}"]


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def hostile_database(path: Path, tables: list[str] = TABLES) -> Path:
    rows = []
    for i in range(120):
        gap = None if i % 7 == 0 else f"v{i}"
        rows.append((i, *([gap] * (len(COLUMNS) - 2)), VALUES[i % 3] if i % 5 else f"Closed\n{payload('v2')}"))
    with duckdb.connect(str(path)) as con:
        for table in tables:
            con.execute(f"CREATE TABLE {quoted(table)} "
                        f"({', '.join(f'{quoted(c)} {t}' for c, t in COLUMNS.items())})")
            con.executemany(f"INSERT INTO {quoted(table)} VALUES ({', '.join('?' * len(COLUMNS))})", rows)
    return path


def pwned() -> list[str]:
    return sorted(p.name for p in TMP.glob(f"{MARK}*"))


def assert_inert(code: str, where: str) -> None:
    """Valid Python, comments of printable ASCII only, and no payload anywhere in its code."""
    compile(code, where, "exec")
    tree = ast.parse(code)
    assert "__import__" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}, where
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            assert all(" " <= c <= "~" for c in tok.string), (where, tok.string)


@pytest.fixture
def cells(monkeypatch) -> list[tuple[str, bool]]:
    """Every cell any sandbox runs in this test, with whether it succeeded (the real execute runs)."""
    seen: list[tuple[str, bool]] = []
    real = SandboxRuntime.execute

    def execute(self, code, timeout_s=None):
        result = real(self, code, timeout_s)
        seen.append((code, result.ok))
        return result

    monkeypatch.setattr(SandboxRuntime, "execute", execute)
    return seen


@pytest.fixture(autouse=True)
def no_marker_left():
    assert pwned() == []
    # the payload works when it does run: the checks below could fail
    exec(payload("self-check"))
    assert pwned() == [f"{MARK}-self-check"]
    (TMP / f"{MARK}-self-check").rmdir()
    yield
    leftovers = pwned()
    for name in leftovers:
        (TMP / name).rmdir()
    assert leftovers == [], f"a payload ran on the host: {leftovers}"


def catalog_twice(db: Path, store: Path, agent: str, instance) -> list:
    reports = []
    for _ in range(2):
        report = catalog_database(database=f"duckdb://{db}", store=str(store), agent=agent, sandbox="local",
                                  exploration_rate=0.0, instance=instance)
        assert not report.failed, [(t.table, t.error) for t in report.failed]
        assert sorted(t.table for t in report.tables) == sorted(TABLES)
        reports.append(report)
    return reports


def metrics_of(table_report) -> dict:
    return json.loads((Path(table_report.html).parent / "catalog_script.metrics.json").read_text())


def assert_feedback_loop(cold, warm) -> None:
    """Run 1 carries one table's script over to the other; run 2 reuses each table's own."""
    first = {t.table: metrics_of(t) for t in cold.tables}
    transferred = [t for t, m in first.items() if m["based_on_table"]]
    assert len(transferred) == 1, first
    (other,) = set(TABLES) - set(transferred)
    assert first[transferred[0]]["based_on_table"] == other and first[transferred[0]]["reuse_error"] is None
    for t in warm.tables:
        m = metrics_of(t)
        ids = {i.id for i in t.issues}
        assert m["based_on"] and m["based_on_table"] is None and m["reuse_error"] is None
        assert set(m["reused"]) == ids and m["relearned"] == [] and t.pass_rate == 1.0, m
        # the names did reach the ids, and the values the checks' arguments
        category = next(c for c in COLUMNS if c.startswith("cat\n"))
        # columns missing on the same rows are one finding, named after its first column
        missing = [i for i in t.issues if i.type == "missing_values"]
        assert {c for c in COLUMNS if c not in ("id", category)} <= {c for i in missing for c in i.affectedColumns}
        assert all(i.id == f"{t.table}_missing_values_{i.affectedColumns[0]}" for i in missing)
        assert f"{t.table}_inconsistent_categories_{category}" in ids


def run_stored_scripts(store: Path, db: Path) -> int:
    """Every .py in the store, run by hand on the host as docs/feedback-loop.md says; returns how many."""
    scripts = sorted(store.rglob("*.py"))
    env = {"PATH": os.environ["PATH"], "DB_CONNECTION_STRING": f"duckdb://{db}?read_only=true"}
    for script in scripts:
        code = script.read_text()
        assert_inert(code, str(script))
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, (script, out.stderr[-3000:])
        if script.name == "catalog_script.py":
            recorded = json.loads((script.parent / "investigations.json").read_text())["investigations"]
            printed = parse_records(out.stdout)
            assert {i["issue_id"]: i["verdict"] for i in recorded} == {
                k: v["verdict"] for k, v in printed.items()}, script
        assert pwned() == [], script
    return len(scripts)


def test_hostile_names_never_become_code(tmp_path, local_sandbox, cells):
    db = hostile_database(tmp_path / "hostile.duckdb")
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        cold, warm = catalog_twice(db, store, "heuristic", instance)
    assert_feedback_loop(cold, warm)
    assert cells and all(ok for _, ok in cells), [c for c, ok in cells if not ok][:1]
    for n, (code, _) in enumerate(cells):
        assert_inert(code, f"cell {n}")
    assert pwned() == []
    # two runs of two tables: a catalog and a summary script each
    assert run_stored_scripts(store, db) == 8


@pytest.fixture
def standin(monkeypatch):
    with StandIn() as s:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-hostile")
        yield s


def test_hostile_names_never_become_code_with_the_anthropic_agent(tmp_path, local_sandbox, cells, standin):
    db = hostile_database(tmp_path / "hostile.duckdb")
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        cold, warm = catalog_twice(db, store, "anthropic", instance)
    for report in (cold, warm):
        for t in report.tables:
            usage = metrics_of(t)["usage"]
            assert usage["agent"] == "anthropic" and usage["fallback_reason"] is None, usage
    assert_feedback_loop(cold, warm)
    # every tool call the model made ran in the sandbox as one cell, and none carried a payload
    calls = [b["input"]["code"] for body in standin.requests for m in body["messages"]
             if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"]
    assert calls and {c for c, _ in cells} >= set(calls)
    for n, (code, _) in enumerate(cells):
        assert_inert(code, f"cell {n}")
    # the prompts that ask for code name the table only as a literal
    first = [b for b in standin.requests if standin.stage(b) == "investigation"][0]
    text = first["messages"][0]["content"][0]["text"]
    assert not any(t in text for t in TABLES) and any(repr(t) in text for t in TABLES)
    assert run_stored_scripts(store, db) == 8


def test_an_old_script_keeps_a_table_warm_and_its_broken_out_names_never_run(tmp_path, local_sandbox, cells):
    """A script of the version before format 2 (ids raw in its markers) is still read."""
    table, poisoned, plain = "events", f"note\n{payload('old-script')}\n#", "page"
    db_path = tmp_path / "events.duckdb"
    with duckdb.connect(str(db_path)) as con:
        con.execute(f'CREATE TABLE events ({quoted(poisoned)} VARCHAR, page VARCHAR)')
        con.executemany("INSERT INTO events VALUES (?, ?)", [(None if i % 3 else "a", None if i % 4 else "b")
                                                              for i in range(40)])
    issues = [IssueModel(id=f"{table}_missing_values_{c}", type="missing_values", severity="high",
                         description="", affectedColumns=[c], suggestedAction="", category="quick_fixes")
              for c in (poisoned, plain)]
    blocks = [setup_block(table), "# block: check missing_values\n" + CHECKS["missing_values"],
              *(f"# block: investigate {i.id}\nrecord({i.id!r}, check_missing_values, {i.affectedColumns[0]!r})\n"
                for i in issues)]
    old = ("# Session script exported by cataloger SandboxResource\n# local sandbox, exported 2024-01-01T00:00:00Z\n"
           + "\n".join(f"# %% cell {n}\n{b}" for n, b in enumerate(blocks, 1)))
    # the earlier version let the name out of its comment
    assert "__import__" in {n.id for n in ast.walk(ast.parse(old)) if isinstance(n, ast.Name)}
    db = DatabaseResource(url=f"duckdb://{db_path}")
    sandbox = SandboxResource(backend="local", isolation="bwrap")
    with sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as runtime:
        db.write_snapshot(table, runtime.data_dir)
        run = run_investigations(runtime, table, issues, PreviousScript("2024-01-01T00:00:00Z", old, table))
        script = runtime.get_session_script()
    assert run.reuse_error is None and run.reused == [f"{table}_missing_values_{plain}"]
    by_id = {i.issue_id: i for i in run.investigations}
    assert all(i.success and i.verdict == "confirmed" for i in run.investigations), run.investigations
    assert by_id[issues[0].id].evidence["missing"] == 26
    assert len(cells) == 2  # the old blocks that are safe to rerun in one cell, the rest in another
    for n, (code, _) in enumerate(cells):
        assert_inert(code, f"cell {n}")
    assert_inert(script, "new script")
    assert f"# block: investigate {comment_id(issues[0].id)}" in script



def test_failed_cells_and_their_errors_stay_comments(tmp_path, local_sandbox):
    breaks = ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029", "\n", "\r", "\r\n"]
    message = "bad\u202e" + "".join(f"{b}{payload(f'error-{n}')}" for n, b in enumerate(breaks))
    sandbox = SandboxResource(backend="local", isolation="bwrap")
    with sandbox.session(env={}) as runtime:
        assert runtime.execute(f"NAME = {literal(message)}").ok
        assert not runtime.execute("raise ValueError(NAME)").ok
        failed = runtime.execute(f"# note\u202e\u2028{payload('code-ls')}\nx = {literal(message)}\x0c\n1 / 0")
        assert not failed.ok and failed.error.type == "ZeroDivisionError"
        assert runtime.execute("print(len(NAME))").ok
        script = runtime.get_session_script()
    assert_inert(script, "session script")
    # the message's first line as Python counts lines, every other separator (and bidi control) escaped
    assert "\n# %% cell 2 FAILED: ValueError: bad\\u202e\\x0c__import__" in script
    path = tmp_path / "session.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60,
                         env={"PATH": os.environ["PATH"]})
    assert out.returncode == 0 and out.stdout == f"{len(message)}\n", out.stderr

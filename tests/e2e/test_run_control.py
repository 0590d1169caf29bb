"""`cataloger run` as a user meets it: Ctrl-C and SIGTERM stop it, a failed table is one line,
progress moves table by table, and the run ends with its issues by severity.

The real command in a subprocess, over the demo database at small scale (or a small DuckDB file
of its own), with real Dagster and the local sandbox.  With CATALOGER_UPDATE_DOCS=1 the test of
`--json` writes docs/run-json-example.json; otherwise it checks that the committed example has
exactly the shape of the live output.  The live output also holds to docs/run-json.schema.json.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import psutil
import pytest

from cli_support import CATALOGER, cataloger, cataloger_env, database_with_a_broken_view
from run_json import assert_valid_run_json

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "run-json-example.json"
DONE = re.compile(r"^  done (\S+) in (\d+\.\d) s$")
STOP_WITHIN_S = 60   # "within seconds" on a loaded two-core machine: a step's sandbox cell ends first


class Watched:
    """A `cataloger run` subprocess whose stderr lines are kept with the time each came."""

    def __init__(self, *args: str, env: dict | None = None, new_session: bool = False) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen([CATALOGER, "run", *args], env={**cataloger_env(), **(env or {})}, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=new_session)
        self.lines: list[tuple[float, str]] = []
        self.tree: set[int] = set()    # every process seen under it
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def done_tables(self) -> list[str]:
        return [m.group(1) for _, line in self.lines if (m := DONE.match(line))]

    def watch_tree(self) -> None:
        try:
            self.tree |= {p.pid for p in psutil.Process(self.proc.pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            pass

    def wait_for(self, condition, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.proc.poll() is None, f"it ended first:\n{self.stderr()}"
            assert time.monotonic() < deadline, f"not within {timeout} s:\n{self.stderr()}"
            self.watch_tree()
            time.sleep(0.1)
        self.watch_tree()

    def finish(self, timeout: float = 600) -> tuple[int, str]:
        out = self.proc.stdout.read()   # not communicate(): it would take stderr from the reader
        self.proc.wait(timeout)
        self._reader.join(10)
        return self.proc.returncode, out

    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)


def alive(pids: set[int]) -> list[psutil.Process]:
    found = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            if p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.NoSuchProcess:
            pass
    return found


def assert_tree_gone(run: Watched) -> None:
    """No process the run started (workers, sandboxes) outlives it."""
    assert run.tree, "no child process was seen: the test watched nothing"
    deadline = time.monotonic() + 10
    while alive(run.tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(run.tree), [(p.pid, p.cmdline()[:3]) for p in alive(run.tree)]


def stop_after_first_table(run: Watched, signo: int, group: bool = False) -> float:
    """Sends the signal once a table has finished, mid-run; the seconds it took to stop."""
    run.wait_for(lambda: run.done_tables())
    sent = time.monotonic()
    if group:   # a Ctrl-C in a terminal: the whole foreground process group gets it
        os.killpg(run.proc.pid, signo)
    else:
        run.proc.send_signal(signo)
    try:
        run.proc.wait(STOP_WITHIN_S)
    except subprocess.TimeoutExpired:
        run.proc.kill()
        pytest.fail(f"still running {STOP_WITHIN_S} s after {signal.Signals(signo).name}:\n{run.stderr()}")
    took = time.monotonic() - sent
    print(f"stopped {took:.1f} s after {signal.Signals(signo).name}")
    return took


def demo_tables(demo_db: Path) -> list[str]:
    with duckdb.connect(str(demo_db), read_only=True) as con:
        return sorted(r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall())


def test_ctrl_c_stops_the_run_and_resume_catalogs_only_the_rest(demo_db, tmp_path):
    store = tmp_path / "store"
    run = Watched("--database", f"duckdb://{demo_db}", "--store", str(store), "--batch", "1")
    stop_after_first_table(run, signal.SIGINT)
    code, out = run.finish()
    assert code == 130, run.stderr()
    finished = run.done_tables()
    assert finished and len(finished) < len(demo_tables(demo_db))
    # said plainly, no table counted failed for it, no traceback
    assert f"stopped (SIGINT): {len(finished)} of" in run.stderr() and "--resume" in run.stderr()
    assert "FAILED" not in run.stderr() and "Traceback" not in run.stderr() and not out
    assert not (store / "demo.duckdb" / "index.html").exists()
    assert_tree_gone(run)

    again = cataloger("run", "--database", f"duckdb://{demo_db}", "--store", str(store), "--resume", "--json")
    assert again.returncode == 0, again.stderr
    tables = {t["table"]: t for t in json.loads(again.stdout)["tables"]}
    assert {name for name, t in tables.items() if t["resumed"]} == set(finished)
    assert all(t["status"] == "ok" for t in tables.values())
    assert (store / "demo.duckdb" / "index.html").is_file()


def test_sigterm_stops_a_batched_run_and_its_sandboxes(demo_db, tmp_path):
    run = Watched("--database", f"duckdb://{demo_db}", "--store", str(tmp_path / "store"), "--batch", "20")
    stop_after_first_table(run, signal.SIGTERM)
    code, out = run.finish()
    assert code == 143, run.stderr()
    assert "stopped (SIGTERM)" in run.stderr() and "FAILED" not in run.stderr() and not out
    # the batch's run was not run again table by table as if a table had failed
    assert len(run.done_tables()) == len(set(run.done_tables()))
    assert_tree_gone(run)


def test_ctrl_c_stops_worker_processes_too(demo_db, tmp_path):
    home = tmp_path / "dagster_home"
    run = Watched("--database", f"duckdb://{demo_db}", "--store", str(tmp_path / "store"),
                  "--batch", "2", "--jobs", "2", env={"DAGSTER_HOME": str(home)}, new_session=True)
    run.wait_for(lambda: len([p for p in run.tree if "cataloger_dagster.cli.worker" in _cmdline(p)]) == 2)
    stop_after_first_table(run, signal.SIGINT, group=True)
    code, _ = run.finish()
    assert code == 130, run.stderr()
    assert "stopped (SIGINT)" in run.stderr() and "FAILED" not in run.stderr()
    assert_tree_gone(run)


def _cmdline(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


def test_a_failed_table_is_one_plain_line_and_its_traceback_is_in_the_log(tmp_path):
    db = database_with_a_broken_view(tmp_path / "mixed.duckdb", rows=60)
    home = tmp_path / "dagster_home"
    out = subprocess.run([CATALOGER, "run", "--database", f"duckdb://{db}", "--store", str(tmp_path / "store")],
                         capture_output=True, text=True, timeout=600, env={**cataloger_env(), "DAGSTER_HOME": str(home)})
    assert out.returncode == 1
    said = out.stderr + out.stdout
    assert "Traceback" not in said and "Stack Trace" not in said
    about = [line for line in said.splitlines() if "broken" in line and "good" not in line]
    progress, summary = [line for line in out.stderr.splitlines() if "broken" in line], \
        [line for line in out.stdout.splitlines() if "broken" in line]
    assert len(progress) == 1 and len(summary) == 1, about
    line = summary[0]
    match = re.fullmatch(r"  FAILED broken: (.+) \(while profiling it\) \(full error in (\S+)\)", line)
    assert match, line
    message = match.group(1)   # the database's words, without the classes of the code that raised it
    assert message.startswith("table 'broken' in duckdb://") and "cannot be read" in message, message
    assert not re.search(r"[\w.]*(Error|Exception|Failure)\b:", message), message
    log = Path(match.group(2))
    assert log.parent == home / "logs" and log.is_file()
    text = log.read_text()
    assert text.startswith("=== broken\n") and 'File "' in text and text.count("=== ") == 1
    assert "cataloged 1/2 tables" in out.stdout


def test_progress_is_per_table_and_the_run_ends_with_issues_by_severity(demo_db, tmp_path):
    run = Watched("--database", f"duckdb://{demo_db}", "--store", str(tmp_path / "store"), "--batch", "20", "--json")
    code, out = run.finish()
    assert code == 0, run.stderr()
    report = json.loads(out)
    names = demo_tables(demo_db)
    # one batch, yet each table's line, with its own time, came as its last step finished
    done = {m.group(1): (at, float(m.group(2))) for at, line in run.lines if (m := DONE.match(line))}
    assert sorted(done) == names, run.stderr()
    tables = {t["table"]: t for t in report["tables"]}
    for name, (_, seconds) in done.items():
        assert abs(tables[name]["seconds"] - seconds) <= 0.1, (name, tables[name]["seconds"], seconds)
    assert len({t["seconds"] for t in tables.values()}) > 1, "every table has the same time: the batch's share"
    assert sum(t["seconds"] for t in tables.values()) < time.monotonic() - run.started
    # totals by severity, equal to the tables' issues
    severities = [i["severity"] for t in report["tables"] for i in t["issues"]]
    assert report["totals"]["issues"] == {s: severities.count(s) for s in ("high", "medium", "low")}
    assert report["totals"]["tables"] == {"total": len(names), "ok": len(names), "degraded": 0, "failed": 0, "kept": 0}
    assert "high" in severities   # the demo plants high-severity defects
    assert_valid_run_json(report)
    # the example reads as a user's run, not as the test's temporary folders
    text = json.dumps(report, indent=2).replace(str(tmp_path), "/home/me").replace(str(demo_db.parent), "/home/me/data")
    _check_or_write_example(json.loads(text))


def test_the_text_summary_lists_each_high_severity_finding(demo_db, tmp_path):
    out = cataloger("run", "--database", f"duckdb://{demo_db}", "--store", str(tmp_path / "store"),
                    "--table", "web_events", "--table", "orders")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    counts = next(line for line in lines if line.startswith("issues: "))
    high = int(re.match(r"issues: (\d+) high, \d+ medium, \d+ low$", counts).group(1))
    listed = [line for line in lines if line.startswith("  HIGH ")]
    assert high >= 1 and len(listed) == high
    for line in listed:   # table, type, columns, a description
        assert re.fullmatch(r"  HIGH (web_events|orders) [a-z_]+ \([^)]+\): .{10,}", line), line


def _shape(value):
    """The keys and kinds of a JSON value: what a reader of the output relies on."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        shapes = [_shape(v) for v in value]
        merged = {}
        for s in shapes:   # the union of the items' keys (issues differ in nothing but values)
            merged = {**merged, **s} if isinstance(s, dict) else s
        return [merged] if shapes else []
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def _check_or_write_example(report: dict) -> None:
    if os.environ.get("CATALOGER_UPDATE_DOCS"):
        EXAMPLE.parent.mkdir(exist_ok=True)
        EXAMPLE.write_text(json.dumps(report, indent=2) + "\n")
        return
    example = json.loads(EXAMPLE.read_text())
    live, documented = _shape(report), _shape(example)
    # nullable fields hold null in one and a value in the other: compare the keys, everywhere
    assert _keys(live) == _keys(documented), "docs/run-json-example.json is not the live shape: " \
        "run this test with CATALOGER_UPDATE_DOCS=1"


# mappings whose keys are data (the numbers each finding's evidence names), not the output's shape
FREE_FORM = (".evidence.finding", ".evidence.investigation")


def _keys(shape, path="") -> set[str]:
    if isinstance(shape, dict):
        if path.endswith(FREE_FORM):
            return set()
        return {f"{path}.{k}" for k in shape} | {p for k, v in shape.items() for p in _keys(v, f"{path}.{k}")}
    if isinstance(shape, list):
        return {p for v in shape for p in _keys(v, f"{path}[]")}
    return set()

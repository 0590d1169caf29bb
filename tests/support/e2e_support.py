"""A real `dagster dev` for the end-to-end tests: start it, talk GraphQL to it, stop all of it.

`dagster dev` spawns a webserver, a daemon, code servers and one process per run (and
the sandbox starts its workers in sessions of their own), so stopping it means more than
terminating one pid: `DagsterDev.stop` kills its process group and every descendant it
has seen, and reports what (if anything) survived.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import psutil

REPO = Path(__file__).resolve().parents[2]
DAGSTER = REPO / ".venv" / "bin" / "dagster"
T = TypeVar("T")

# Runs the sensors request carry this tag; the instance never dequeues them (limit 0), so
# on a 2-core CI machine only the run a test launches executes, while the sensor's
# requests stay visible (queued, with their tags) for the test to check.
SENSOR_REASON_TAG = "cataloger/reason"
DAGSTER_YAML = f"""\
telemetry:
  enabled: false
concurrency:
  runs:
    max_concurrent_runs: 2
    tag_concurrency_limits:
      - key: "{SENSOR_REASON_TAG}"
        limit: 0
"""


def default_interrupts() -> None:
    """As a terminal starts a command: Ctrl-C (SIGINT) and SIGTERM stop it.  A process started in
    the background of a script inherits both ignored, and `dagster dev` then maps SIGTERM to
    the ignored SIGINT: it would not stop at all (`make ui` resets both the same way)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check: Callable[[], T | None], timeout: float, every: float = 1.0) -> T:
    """Poll `check` until it returns something truthy; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = check()
            if value:
                return value
        except (OSError, urllib.error.URLError, GraphQLError) as exc:
            last_error = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what} (last error: {last_error})")
        time.sleep(every)


class GraphQLError(RuntimeError):
    pass


@dataclass
class DagsterDev:
    """A `dagster dev -w workspace.yaml` on a loopback port, with its own DAGSTER_HOME."""

    home: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    log_path: Path | None = None
    dagster_yaml: str = DAGSTER_YAML
    proc: subprocess.Popen | None = None
    seen: dict[int, float] = field(default_factory=dict)  # pid -> create_time

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180) -> "DagsterDev":
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "dagster.yaml").write_text(self.dagster_yaml)
        self.log_path = self.log_path or self.home / "dagster-dev.log"
        env = {**os.environ, "DAGSTER_HOME": str(self.home), **self.env}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [str(DAGSTER), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(self.port)],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, so stop() reaches every child
                preexec_fn=default_interrupts,
            )
        try:
            wait_for(f"dagster dev on {self.url}", self._up, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"dagster dev exited with {self.proc.returncode}:\n{self.log_tail()}")
        with urllib.request.urlopen(f"{self.url}/server_info", timeout=5) as resp:
            info = json.load(resp)
        # the webserver answers before the code location has loaded: wait for both
        data = self.graphql("{ workspaceOrError { ... on Workspace { locationEntries { "
                            "locationOrLoadError { __typename } } } } }")
        entries = data["workspaceOrError"]["locationEntries"]
        loaded = entries and all(e["locationOrLoadError"] and
                                 e["locationOrLoadError"]["__typename"] == "RepositoryLocation" for e in entries)
        if entries and any((e["locationOrLoadError"] or {}).get("__typename") == "PythonError" for e in entries):
            raise RuntimeError(f"code location failed to load:\n{self.log_tail()}")
        return bool(info.get("dagster_version") and loaded)

    def graphql(self, query: str, variables: dict[str, Any] | None = None, timeout: float = 60) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(f"{self.url}/graphql", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            payload = json.load(resp)
        if payload.get("errors"):
            raise GraphQLError(json.dumps(payload["errors"])[:2000])
        return payload["data"]

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def remember_descendants(self) -> None:
        """Note every live descendant, including those that left the process group."""
        try:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                try:
                    self.seen.setdefault(child.pid, child.create_time())
                except psutil.Error:
                    pass
        except psutil.Error:
            pass

    def _alive(self) -> list[psutil.Process]:
        alive = []
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.Error:
                pass
        for p in psutil.process_iter(["pid"]):
            try:
                if os.getsid(p.pid) == self.proc.pid and p.status() != psutil.STATUS_ZOMBIE \
                        and p.pid not in {a.pid for a in alive}:
                    alive.append(p)
            except (psutil.Error, OSError):
                pass
        return alive

    def stop(self, grace: float = 20) -> list[str]:
        """Stop dagster dev and everything it started; returns the processes that survived."""
        if self.proc is None:
            return []
        self.remember_descendants()  # the leader itself is found by its session id
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)  # what Ctrl-C sends: dagster dev's clean path
                self.proc.wait(timeout=grace)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        # a clean exit can still leave run workers behind; whatever is left is killed
        for p in self._alive():
            try:
                p.kill()
            except psutil.Error:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 10
        while (left := self._alive()) and time.monotonic() < deadline:
            time.sleep(0.2)
        return [f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in left if _exists(p)]


def _exists(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


RUN_DONE = ("SUCCESS", "FAILURE", "CANCELED")
LAUNCH_RUN = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on InvalidSubsetError { message }
    ... on PipelineNotFoundError { message }
  }
}"""
RUN_STATUS = "query Run($id: ID!) { runOrError(runId: $id) { __typename ... on Run { status } } }"
REPOSITORIES = "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"


@dataclass
class CatalogStack:
    """`dagster dev` over a demo database, plus the runs the tests launched through it."""

    dev: DagsterDev
    database: Path | None  # the demo database, unless the stack was given a URL
    store: Path
    runs: dict[str, str] = field(default_factory=dict)  # table -> run id

    def repository(self) -> tuple[str, str]:
        """(location name, repository name) of the one code location."""
        nodes = self.dev.graphql(REPOSITORIES)["repositoriesOrError"]["nodes"]
        assert len(nodes) == 1, f"expected one repository, got {nodes}"
        return nodes[0]["location"]["name"], nodes[0]["name"]

    def catalog_partition(self, table: str, timeout: float = 300) -> str:
        """Run the `catalog_table` job for one partition (once per stack); returns the run id."""
        if table in self.runs:
            return self.runs[table]
        run_id = self.launch_partition(table)
        status = wait_for(
            f"run {run_id} ({table}) to finish",
            lambda: (s := self.dev.graphql(RUN_STATUS, {"id": run_id})["runOrError"].get("status")) in RUN_DONE and s,
            timeout,
        )
        self.dev.remember_descendants()
        assert status == "SUCCESS", f"run {run_id} of {table} ended {status}:\n{self.dev.log_tail()}"
        self.runs[table] = run_id
        return run_id

    def launch_partition(self, table: str) -> str:
        """Launch the `catalog_table` job for one partition, as the launchpad does; returns the run id."""
        location, repository = self.repository()
        params = {
            "selector": {"repositoryLocationName": location, "repositoryName": repository,
                         "jobName": "catalog_table"},
            "runConfigData": {
                # deterministic: no random exploration (the job runs in one process by itself)
                "ops": {"investigations": {"config": {"exploration_rate": 0.0}}},
            },
            "executionMetadata": {"tags": [{"key": "dagster/partition", "value": table},
                                           {"key": "cataloger/launched_by", "value": "e2e-test"}]},
        }
        result = self.dev.graphql(LAUNCH_RUN, {"params": params})["launchRun"]
        assert result["__typename"] == "LaunchRunSuccess", f"launchRun failed: {result}"
        return result["run"]["runId"]


def catalog_stack_session(root: Path, database_url: str | None = None) -> Iterator[CatalogStack]:
    """Start `dagster dev` on `database_url` (default: a demo database built here); on exit
    stop it and check nothing is left."""
    from cataloger_dagster.demo import create_demo_database

    root.mkdir(parents=True, exist_ok=True)
    database, store = root / "demo.duckdb", root / "store"
    if database_url is None:
        create_demo_database(database, scale=0.05)
        database_url = f"duckdb:///{database}"
    else:
        database = None
    dev = DagsterDev(home=root / "dagster_home", env={
        "CATALOGER_DATABASE": database_url,
        "CATALOGER_STORE": str(store),
        "CATALOGER_SENSOR_INTERVAL_S": "5",
    })
    dev.start()
    try:
        # the "Join the community" dialog would cover every page the browser test opens
        dev.graphql("mutation { setNuxSeen }")
        yield CatalogStack(dev=dev, database=database, store=store)
    finally:
        left = dev.stop()
        assert not left, f"processes left running after stopping dagster dev: {left}"

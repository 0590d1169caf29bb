"""Runs in containers: Dagster's DockerRunLauncher runs each table's `catalog_table` in a container.

The instance is deploy/docker/dagster.yaml itself (only the host's paths and the socket's group
put in), so the example is what is tested: run storage in PostgreSQL, the store in S3 (moto's
server), the source in PostgreSQL, nothing on a disk the containers share with this process
but the sandbox's scratch folders, which the sibling sandbox containers mount from the host.
The code location is served as a deployment serves it (`dagster api grpc`), and both runs are
launched from it at once with `dagster job launch` (straight to the launcher: the daemon's queue
is not this test's subject), each in the run-worker image (`cataloger sandbox build-run-image`,
built by .ci/run_image.sh in CI).  On a 2-core machine under a load of 9 it takes about 2.5
minutes, a minute of it launching (three Python processes importing Dagster and the package).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.conftest import sandbox_problem, service_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.postgres]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "deploy" / "docker" / "dagster.yaml"
DAGSTER = str(Path(sys.executable).parent / "dagster")
SOCKET = "/var/run/docker.sock"
TABLES = ("orders", "customers")
RUN_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def engine():
    """The Docker engine, with the sandbox image and a run-worker image of these very sources."""
    problem = sandbox_problem("docker")
    if problem:
        service_unavailable(problem)
    from cataloger_dagster.cli.run_image import DEFAULT_RUN_TAG, run_image_present

    if not run_image_present():
        service_unavailable(f"the run-worker image {DEFAULT_RUN_TAG} built from these sources "
                            "(`cataloger sandbox build-run-image`; CI: .ci/run_image.sh)")
    import docker

    client = docker.from_env(timeout=60)
    yield client
    client.close()


@pytest.fixture
def source(postgres_admin_url, postgres_schema):
    """(source URL, Dagster storage URL, password) on the PostgreSQL server, with a password of
    their own that must never be stored (the CI server trusts local connections: any is accepted)."""
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.orders AS SELECT g AS order_id, "
                 "CASE WHEN g % 7 = 0 THEN NULL ELSE g % 13 END AS customer_id, "
                 "CASE WHEN g % 11 = 0 THEN -999 ELSE (g * 37) % 500 END AS amount, "
                 "CASE WHEN g % 5 = 0 THEN 'SHIPPED' ELSE 'shipped' END AS status "
                 "FROM generate_series(1, 400) g")
    conn.execute(f"CREATE TABLE {schema}.customers AS SELECT g AS customer_id, "
                 "CASE WHEN g % 4 = 0 THEN 'n/a' ELSE 'c' || g || '@example.com' END AS email, "
                 "CASE WHEN g % 9 = 0 THEN NULL ELSE 'Name ' || g END AS name "
                 "FROM generate_series(1, 300) g")
    storage_db = f"dagster_{uuid.uuid4().hex[:10]}"
    conn.execute(f"CREATE DATABASE {storage_db}")
    password = f"pw{uuid.uuid4().hex}"
    parts = urlsplit(postgres_admin_url)
    assert parts.password is None, "the test gives the URL a password of its own"
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port or 5432}"
    source_url = parts._replace(netloc=netloc).geturl() + f"?schema={schema}"
    storage_url = parts._replace(scheme="postgresql+psycopg2", netloc=netloc, path=f"/{storage_db}").geturl()
    try:
        yield source_url, storage_url, password
    finally:
        conn.execute(f"DROP DATABASE IF EXISTS {storage_db} WITH (FORCE)")


def instance_home(tmp: Path, scratch: Path) -> Path:
    """$DAGSTER_HOME with the example's dagster.yaml, the host's socket group and scratch path put in."""
    config = yaml.safe_load(EXAMPLE.read_text())
    launcher = config["run_launcher"]["config"]
    kwargs = launcher["container_kwargs"]
    example_scratch = next(v for v in launcher["env_vars"] if v.startswith("TMPDIR="))[len("TMPDIR="):]
    assert kwargs["volumes"].pop(example_scratch)["bind"] == example_scratch
    kwargs["volumes"][str(scratch)] = {"bind": str(scratch), "mode": "rw"}
    launcher["env_vars"] = [v for v in launcher["env_vars"] if not v.startswith("TMPDIR=")] + [f"TMPDIR={scratch}"]
    kwargs["group_add"] = [str(os.stat(SOCKET).st_gid)]
    # launched at once rather than queued for a daemon: the queue and its pools are tested apart
    config["run_coordinator"] = {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"}
    home = tmp / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(yaml.safe_dump(config))
    return home


@pytest.fixture
def scratch():
    """The sandbox's scratch folder, at one path on the host and in the run containers."""
    path = Path("/var/tmp") / f"cataloger-run-scratch-{uuid.uuid4().hex[:8]}"
    path.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(path, 10002, 10002)  # the run worker's uid (deploy/docker/Dockerfile)
    else:
        path.chmod(0o1777)
    yield path
    leftovers = [p.name for p in path.iterdir()]
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)
    assert not leftovers, f"the runs left sandbox folders behind: {leftovers}"


def test_each_table_runs_in_its_own_container_with_the_store_on_s3(engine, source, scratch, s3_server, tmp_path,
                                                                   monkeypatch):
    import boto3
    import dagster as dg

    source_url, storage_url, password = source
    access_key, secret_key = f"AK{uuid.uuid4().hex[:16].upper()}", f"sk-{uuid.uuid4().hex}"
    bucket = f"catalog-{uuid.uuid4().hex[:8]}"
    env = {
        "DAGSTER_HOME": str(instance_home(tmp_path, scratch)),
        "DAGSTER_PG_URL": storage_url,
        "CATALOGER_DATABASE": source_url,
        "CATALOGER_STORE": f"s3://{bucket}/catalog",
        "CATALOGER_SANDBOX": "docker",  # as the runs have it (dagster.yaml), so the code locations agree
        "CATALOGER_RUN_IMAGE": "cataloger-run:latest",
        "CATALOGER_RUN_NETWORK": "host",  # moto and PostgreSQL listen on the host's loopback
        "AWS_ACCESS_KEY_ID": access_key,
        "AWS_SECRET_ACCESS_KEY": secret_key,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": s3_server,
    }
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    s3 = boto3.client("s3", endpoint_url=s3_server)
    s3.create_bucket(Bucket=bucket)

    instance = dg.DagsterInstance.from_config(env["DAGSTER_HOME"])
    runs: dict[str, str] = {}
    processes: dict[str, subprocess.Popen] = {}  # the code server and the launches
    started = int(time.time())
    try:
        instance.add_dynamic_partitions("tables", list(TABLES))
        port = code_server(tmp_path, processes)
        # both at once, as a daemon would dequeue them
        for table in TABLES:
            runs[table] = str(uuid.uuid4())
            processes[table] = subprocess.Popen(
                [DAGSTER, "job", "launch", "--grpc-host", "127.0.0.1", "--grpc-port", str(port), "-j", "catalog_table",
                 "--run-id", runs[table], "--tags", json.dumps({"dagster/partition": table})],
                cwd=tmp_path, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for table in TABLES:
            launch = processes[table]
            _, err = launch.communicate(timeout=180)
            assert launch.returncode == 0, f"{table}: {err[-3000:]}"
        print(f"launched in {time.time() - started:.0f}s")
        finished = wait_for(instance, engine, runs.values())
        print(f"finished in {time.time() - started:.0f}s")
        check_runs(instance, engine, runs, finished, source_url)
        check_sandbox_siblings(engine, started)
        check_store(s3, bucket, runs)
        check_no_secret(instance, engine, s3, bucket, runs.values(), [password, secret_key])
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
                try:
                    process.communicate(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()
        for run_id in runs.values():
            for container in engine.containers.list(all=True, filters={"label": f"dagster/run_id={run_id}"}):
                container.remove(force=True)
        instance.dispose()


def code_server(cwd: Path, processes: dict) -> int:
    """The code location as a deployment serves it: a gRPC server, loaded once for both launches."""
    from e2e_support import free_port

    port = free_port()
    log = cwd / "code_server.log"
    with open(log, "w") as out:  # a file, not a pipe nobody reads while it serves
        processes["code server"] = server = subprocess.Popen(
            [DAGSTER, "api", "grpc", "-m", "cataloger_dagster.definitions", "--host", "127.0.0.1", "--port", str(port)],
            cwd=cwd, env=os.environ.copy(), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert server.poll() is None, f"the code server exited: {log.read_text()[-3000:]}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return port  # it listens once the code is loaded; a launch waits for its answers anyway
        except OSError:
            time.sleep(0.5)
    pytest.fail("the code server did not answer within 180s")


def wait_for(instance, engine, run_ids) -> dict:
    """Each run, once finished; a run whose container died first fails the test with its logs."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    pending, done = set(run_ids), {}
    while pending and time.monotonic() < deadline:
        for run_id in list(pending):
            run = instance.get_run_by_id(run_id)
            if run.is_finished:
                done[run_id] = run
                pending.discard(run_id)
                continue
            for container in engine.containers.list(all=True, filters={"label": f"dagster/run_id={run_id}"}):
                if container.status == "exited":
                    time.sleep(5)  # its last events may still be on their way
                    if not instance.get_run_by_id(run_id).is_finished:
                        logs = container.logs().decode(errors="replace")[-4000:]
                        pytest.fail(f"run {run_id}'s container exited, the run unfinished:\n{logs}")
        time.sleep(2)
    assert not pending, f"runs not finished within {RUN_TIMEOUT_S}s:\n" + "\n".join(
        _state(instance, engine, run_id) for run_id in sorted(pending))
    return done


def _state(instance, engine, run_id: str) -> str:
    run = instance.get_run_by_id(run_id)
    events = [f"{e.dagster_event.event_type_value if e.dagster_event else ''} {e.message}"[:300]
              for e in instance.all_logs(run_id)][-8:]
    containers = [f"{c.name} {c.status}:\n{c.logs(tail=40).decode(errors='replace')}"
                  for c in engine.containers.list(all=True, filters={"label": f"dagster/run_id={run_id}"})]
    return f"run {run_id} {run.status}; last events: {events}; containers: {containers}"


def check_runs(instance, engine, runs: dict, finished: dict, source_url: str) -> None:
    import dagster as dg

    containers = {}
    for table, run_id in runs.items():
        run = finished[run_id]
        if run.status != dg.DagsterRunStatus.SUCCESS:
            pytest.fail(f"{table!r}: {_state(instance, engine, run_id)}")
        labelled = engine.containers.list(all=True, filters={"label": f"dagster/run_id={run_id}"})
        assert len(labelled) == 1, f"run of {table!r}: containers {[c.name for c in labelled]}"
        container = labelled[0]
        assert run.tags["docker/container_id"] == container.id
        assert container.image.tags == ["cataloger-run:latest"]
        assert container.attrs["State"]["ExitCode"] == 0
        assert container.attrs["Config"]["User"] == "10002:10002"
        # the secrets reached the run by name, so their absence below is not for want of them
        assert f"CATALOGER_DATABASE={source_url}" in container.attrs["Config"]["Env"]
        containers[table] = container.id
        cells = [e.asset_materialization.metadata["sandbox_cells"].value
                 for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
                 if e.asset_materialization.asset_key == dg.AssetKey("investigations")]
        assert cells and cells[0] > 0, f"no sandbox cell ran for {table!r}: {cells}"
    assert len(set(containers.values())) == len(runs), containers


def check_sandbox_siblings(engine, since: int) -> None:
    """The investigations ran in sandbox containers beside the runs' own, and none is left."""
    from cataloger_dagster.resources.sandbox.docker import LABEL, OWNER_LABEL

    created = list(engine.events(since=since, until=int(time.time()) + 1, decode=True,
                                 filters={"type": "container", "event": "create", "label": LABEL}))
    owners = {e["Actor"]["Attributes"].get(OWNER_LABEL) for e in created}
    assert len(owners) >= len(TABLES), f"sandbox containers created: {owners}"
    assert not engine.containers.list(all=True, filters={"label": LABEL}), "sandbox containers left behind"


def check_store(s3, bucket: str, runs: dict) -> None:
    keys = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])]
    for table in runs:
        mine = [k for k in keys if f"/{table}/" in k]
        for name in ("profile.json", "investigations.json", "catalog_script.py", "catalog.html"):
            assert any(k.endswith("/" + name) for k in mine), f"{table}: no {name} in s3://{bucket}: {mine}"


def _stored_texts(instance, run_ids) -> dict[str, str]:
    """What Dagster keeps of the runs: the runs, their job snapshots and every event, as text."""
    from dagster._serdes import serialize_value

    texts = {}
    for run_id in run_ids:
        run = instance.get_run_by_id(run_id)
        texts[f"run {run_id}"] = serialize_value(run)
        texts[f"job snapshot of {run_id}"] = serialize_value(instance.get_job_snapshot(run.job_snapshot_id))
        texts[f"event log of {run_id}"] = "\n".join(serialize_value(e) for e in instance.all_logs(run_id))
    return texts


def _storage_dump(url: str) -> str:
    """Every cell of every table of the storage database, compressed ones inflated."""
    import psycopg

    out = []
    with psycopg.connect(url.replace("postgresql+psycopg2://", "postgresql://", 1)) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if isinstance(cell, (bytes, memoryview)):
                        data = bytes(cell)
                        try:
                            data = zlib.decompress(data)
                        except zlib.error:
                            pass
                        out.append(data.decode(errors="replace"))
                    elif cell is not None:
                        out.append(str(cell))
    return "\n".join(out)


def check_no_secret(instance, engine, s3, bucket: str, run_ids, secrets: list[str]) -> None:
    texts = _stored_texts(instance, run_ids)
    texts["Dagster's PostgreSQL storage"] = _storage_dump(os.environ["DAGSTER_PG_URL"])
    texts[str(EXAMPLE)] = EXAMPLE.read_text()
    for run_id in run_ids:
        for container in engine.containers.list(all=True, filters={"label": f"dagster/run_id={run_id}"}):
            texts[f"container {container.name}'s output"] = container.logs().decode(errors="replace")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for obj in page.get("Contents", []):
            body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
            texts[f"s3://{bucket}/{obj['Key']}"] = body.decode(errors="replace")
    assert len(texts) > 3 * len(run_ids)
    for secret in secrets:
        leaks = [where for where, text in texts.items() if secret in text]
        assert not leaks, f"a secret is stored in: {leaks}"

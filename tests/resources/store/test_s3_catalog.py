"""The whole catalog with CATALOGER_STORE=s3://bucket/prefix, over moto's S3 server."""

import json

import boto3
import dagster as dg

from cataloger_dagster.cli.runner import catalog_database


def test_catalog_run_writes_to_s3_and_the_next_run_learns_from_it(demo_db, s3_server, s3_bucket, monkeypatch,
                                                                     local_sandbox):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing-secret-value")
    store = f"s3://{s3_bucket}/catalogs"
    with dg.instance_for_test() as instance:
        first = catalog_database(database=f"duckdb://{demo_db}", store=store, tables=["orders"],
                                 exploration_rate=0.0, instance=instance)
        second = catalog_database(database=f"duckdb://{demo_db}", store=store, tables=["orders"],
                                  exploration_rate=0.0, instance=instance)
    assert [t.status for t in first.tables + second.tables] == ["ok", "ok"]
    assert first.index == f"s3://{s3_bucket}/catalogs/demo.duckdb/index.html"
    s3 = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1")
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket, Prefix="catalogs/")["Contents"]}
    for report in (first.tables[0], second.tables[0]):
        run = f"catalogs/demo.duckdb/orders/{report.run}/"
        for name in ("profile.json", "issues.json", "investigations.json", "catalog.html",
                     "catalog_script.py", "catalog_script.metrics.json", "recent_summary.html",
                     "run_summary.json"):
            assert run + name in keys
    key = "catalogs/demo.duckdb/orders/timelapse.html"
    timelapse = s3.get_object(Bucket=s3_bucket, Key=key)["Body"].read().decode()
    assert timelapse.count('<tr class="run"') == 2      # the table's, replaced by the second run
    metrics = json.loads(s3.get_object(
        Bucket=s3_bucket, Key=f"catalogs/demo.duckdb/orders/{second.tables[0].run}/catalog_script.metrics.json"
    )["Body"].read())
    assert metrics["based_on"] == first.tables[0].run and metrics["cells"] <= 3
    assert second.tables[0].sandbox_cells <= 3 < first.tables[0].sandbox_cells
    # no credential is written anywhere in the store
    for key in keys:
        body = s3.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
        assert b"testing-secret-value" not in body, key

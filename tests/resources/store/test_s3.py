"""`S3Store` (store/s3.py): the store in an S3 bucket, on moto's server over HTTP.  What
only this backend does: keys below the store's prefix, conditional puts, content types, settings
taken from an `S3Resource`, listing past one page, and errors (missing bucket, no credentials, an
unreachable endpoint) that say what to do and never show a secret."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from dagster_aws.s3 import S3Resource

from cataloger_dagster.resources.store import ArtifactExistsError, S3Store, StoreError

PREFIX = "shop/orders"


def stamp(i: int) -> str:
    """The i-th of a series of distinct, ascending run timestamps."""
    return f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:06d}Z"


def keys(s3_resource, bucket: str) -> set[str]:
    listing = s3_resource.get_client().list_objects_v2(Bucket=bucket)
    return {o["Key"] for o in listing.get("Contents", [])}


def test_a_missing_bucket_gives_a_clear_error(s3_resource):
    store = S3Store(bucket="no-such-bucket-here", s3=s3_resource)
    with pytest.raises(StoreError) as info:
        store.list_runs(PREFIX)
    message = str(info.value)
    assert "'no-such-bucket-here'" in message and "does not exist" in message
    assert "aws s3 mb s3://no-such-bucket-here" in message
    assert "testing" not in message  # the (dummy) credentials never show


def test_s3_writes_are_conditional_on_the_server(s3_resource, s3_bucket):
    store = S3Store(bucket=s3_bucket, s3=s3_resource)
    # bypass the existence check: the server itself must refuse the second put
    store._put("shop/orders/x/run.json", b"first", if_absent=True)
    with pytest.raises(ArtifactExistsError, match="s3://"):
        store._put("shop/orders/x/run.json", b"second", if_absent=True)
    assert store._read("shop/orders/x/run.json") == b"first"


def test_secrets_stay_out_of_repr_and_describe():
    store = S3Store(bucket="b", aws_access_key_id="AKIAKEY", aws_secret_access_key="SeCrEt",
                          endpoint_url="http://user:pw@localhost:9000")
    for text in (repr(store), store.describe()):
        assert "SeCrEt" not in text and "AKIAKEY" not in text and "pw@" not in text
    assert "localhost:9000" in store.describe()



@pytest.mark.parametrize("prefix, base", [("", ""), ("team", "team/"), ("/team/cat/", "team/cat/")])
def test_every_key_lives_below_the_store_prefix(s3_resource, s3_bucket, prefix, base):
    store = S3Store(bucket=s3_bucket, prefix=prefix, s3=s3_resource)
    ts = store.open_run(PREFIX, "run-1", table="orders")
    uri = store.write_artifact(PREFIX, ts, "catalog.html", "<p>x</p>")
    store.write_index("shop", "<h1>i</h1>")
    assert uri == f"s3://{s3_bucket}/{base}shop/orders/{ts}/catalog.html"
    assert store.index_uri("shop") == f"s3://{s3_bucket}/{base}shop/index.html"
    found = keys(s3_resource, s3_bucket)
    assert {f"{base}shop/orders/{ts}/run.json", f"{base}shop/orders/{ts}/catalog.html",
            f"{base}shop/index.html"} <= found
    assert all(k.startswith(f"{base}shop/") for k in found), found
    assert store.list_tables("shop") == ["orders"]


def test_objects_carry_their_content_type(s3_resource, s3_bucket):
    """Pages served straight from a bucket render only with the right type (and charset)."""
    store = S3Store(bucket=s3_bucket, s3=s3_resource)
    for name in ("catalog.html", "profile.json", "catalog_script.py", "blob.bin", "notes.zzz"):
        store.write_artifact(PREFIX, stamp(1), name, "x")
    client = s3_resource.get_client()

    def content_type(name: str) -> str:
        return client.head_object(Bucket=s3_bucket, Key=f"shop/orders/{stamp(1)}/{name}")["ContentType"]

    assert content_type("catalog.html") == "text/html; charset=utf-8"
    assert content_type("profile.json") == "application/json; charset=utf-8"
    assert content_type("catalog_script.py") == "text/x-python; charset=utf-8"
    assert content_type("blob.bin") == "application/octet-stream"  # no charset on binary types
    store.write_index("shop", "<h1>i</h1>")
    assert client.head_object(Bucket=s3_bucket, Key="shop/index.html")["ContentType"] == "text/html; charset=utf-8"


def test_settings_come_from_an_s3_resource_unless_given(s3_server, aws_dummy_credentials):
    s3 = S3Resource(endpoint_url=s3_server, region_name="us-east-1", max_attempts=2)
    store = S3Store(bucket="b", s3=s3, region_name="eu-west-1")
    assert (store.endpoint_url, store.max_attempts) == (s3_server, 2)
    assert store.region_name == "eu-west-1"  # what the store is given wins over the resource's
    again = store.s3_resource()
    assert isinstance(again, S3Resource)
    assert (again.endpoint_url, again.region_name, again.max_attempts) == (s3_server, "eu-west-1", 2)


@pytest.mark.slow
def test_listing_follows_every_page(s3_resource, s3_bucket):
    """S3 lists 1000 entries a page, folders and files together; the store must not stop at the first."""
    client = s3_resource.get_client()
    runs, loose = 600, 401
    keys_ = [f"shop/orders/{stamp(i)}/run.json" for i in range(runs)]
    keys_ += [f"shop/orders/loose{i:04d}.txt" for i in range(loose)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: client.put_object(Bucket=s3_bucket, Key=k, Body=b"{}"), keys_))
    store = S3Store(bucket=s3_bucket, s3=s3_resource)
    folders, files = store._list(PREFIX)
    assert len(folders) == runs and len(files) == loose
    assert sorted(files)[-1] == f"loose{loose - 1:04d}.txt"
    assert store.list_runs(PREFIX) == [stamp(i) for i in range(runs)]


def test_a_bucket_that_disappears_gives_the_missing_bucket_error(s3_resource, s3_bucket):
    store = S3Store(bucket=s3_bucket, s3=s3_resource)
    assert store.list_runs(PREFIX) == []  # the bucket was there when the client was made
    s3_resource.get_client().delete_bucket(Bucket=s3_bucket)
    for use in (lambda: store.write_artifact(PREFIX, stamp(1), "a.txt", "x"),
                lambda: store.read_artifact(PREFIX, stamp(1), "a.txt"),
                lambda: store.list_runs(PREFIX)):
        with pytest.raises(StoreError, match=f"S3 bucket '{s3_bucket}' at .* does not exist"):
            use()


def test_no_credentials_gives_a_clear_error(s3_server, monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    # nowhere else to find any: no files, no instance metadata service
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    store = S3Store(bucket="any", endpoint_url=s3_server, region_name="us-east-1")
    with pytest.raises(StoreError, match="no AWS credentials found for s3://any; set AWS_PROFILE"):
        store.list_runs(PREFIX)


def test_an_unreachable_endpoint_gives_a_clear_error_without_its_password(aws_dummy_credentials):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = S3Store(bucket="b", endpoint_url=f"http://user:hunter2@127.0.0.1:{port}",
                          region_name="us-east-1", max_attempts=1)
    with pytest.raises(StoreError) as info:
        store.list_runs(PREFIX)
    message = str(info.value)
    assert f"cannot reach http://127.0.0.1:{port} for s3://b" in message
    assert "hunter2" not in message and "user" not in message

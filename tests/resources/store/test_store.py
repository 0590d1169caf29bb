"""The store package (store/__init__.py): its public names (the layout's `store_name`
and friends, re-exported) and `store_from_url`, which picks the backend from a location.
The store's behaviour is tested in test_base.py (both backends), test_local.py and test_s3.py."""

from __future__ import annotations

import re

import pytest

from cataloger_dagster.resources import store as ss
from cataloger_dagster.resources.store import (
    LocalStore,
    S3Store,
    store_from_url,
)

PREFIX = "shop/orders"
SCRIPT = "catalog_script.py"


def stamp(i: int) -> str:
    """The i-th of a series of distinct, ascending run timestamps."""
    return f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:06d}Z"


# Names that used to break paths, with the plain names beside them.
HOSTILE = ["a/b", "a", "..", ".", "%", "50%25", "x" * 300, "x" * 301, "index.html", "INDEX.HTML",
           "index_history", "alerts", "database_runs", "mcp_capsules", "table_facts", "review_log", "-rf", ".hidden",
           "Orders", "orders",
           "line\nbreak", "my table", "a~2Fb",
           "#frag?q=1", "back\\slash", "café", "é" * 200]


def test_store_name_keeps_plain_names_and_maps_the_rest_to_distinct_safe_segments():
    for plain in ("orders", "Orders", "order_items", "v1.2", "a-b", "_tmp", "x" * 160):
        assert ss.store_name(plain) == plain
    segments = [ss.store_name(name) for name in HOSTILE]
    assert len(set(segments)) == len(HOSTILE)
    for name, segment in zip(HOSTILE, segments):
        assert re.fullmatch(r"[A-Za-z0-9_~][A-Za-z0-9_.~-]*", segment), (name, segment)
        assert len(segment) <= ss.MAX_SEGMENT
        # never the folder of the index, its history or one of the database's logs
        assert segment.casefold() not in ("index.html", "index_history", "alerts", "database_runs", "mcp_capsules",
                                          "table_facts", "review_log")
        assert ss.name_of_folder(segment) == (None if ss.HASH_MARK in segment else name)
    assert ss.store_name("index.html") == "index~2Ehtml"
    assert ss.store_name("a/b") == "a~2Fb"
    # a long name keeps a readable head and ends in a hash of the whole name
    assert ss.store_name("x" * 300).startswith("x" * 100)
    assert ss.store_name("x" * 300) != ss.store_name("x" * 301)
    with pytest.raises(ValueError, match="non-empty"):
        ss.store_name("")


def test_store_from_url(tmp_path, s3_server, aws_dummy_credentials, monkeypatch):
    local = store_from_url(str(tmp_path / "a"))
    assert isinstance(local, LocalStore) and local.root == str(tmp_path / "a")
    assert isinstance(store_from_url(f"file://{tmp_path}/b"), LocalStore)
    with pytest.raises(ValueError, match="bucket"):
        store_from_url("s3:///prefix")
    with pytest.raises(ValueError, match="unsupported"):
        store_from_url("gs://bucket/x")

    # the usual AWS environment reaches the S3 client
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    store = store_from_url("s3://from-url-bucket/team/catalog/")
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix) == ("from-url-bucket", "team/catalog")
    store.s3_resource().get_client().create_bucket(Bucket="from-url-bucket")
    uri = store.write_script(PREFIX, stamp(1), SCRIPT, "x = 1")
    assert uri == f"s3://from-url-bucket/team/catalog/shop/orders/{stamp(1)}/{SCRIPT}"
    assert store.get_latest_script(PREFIX, SCRIPT) == (stamp(1), "x = 1")


def test_store_from_url_reads_paths_as_people_write_them(tmp_path, monkeypatch):
    for empty in ("", "   ", None):
        with pytest.raises(ValueError, match="location is empty"):
            store_from_url(empty)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store_from_url("  ~/catalogs  ").root == str(tmp_path / "catalogs")
    # a file URL is percent-decoded: a space in a folder name arrives as %20
    assert store_from_url(f"file://{tmp_path}/my%20store").root == f"{tmp_path}/my store"
    # a Windows-style drive letter is a path, not a scheme
    assert isinstance(store_from_url("c:/stores/x"), LocalStore)


def test_store_from_url_takes_the_s3_settings_given(s3_resource, s3_bucket):
    store = store_from_url(f"S3://{s3_bucket}/", s3=s3_resource)
    assert isinstance(store, S3Store) and (store.bucket, store.prefix) == (s3_bucket, "")
    assert store.endpoint_url == s3_resource.endpoint_url
    uri = store.write_script(PREFIX, stamp(1), SCRIPT, "x = 1")
    assert uri == f"s3://{s3_bucket}/shop/orders/{stamp(1)}/{SCRIPT}"


def test_store_url_gives_back_a_location_store_from_url_reads(tmp_path, s3_resource, s3_bucket):
    from cataloger_dagster.resources.store import store_url

    local = LocalStore(root=str(tmp_path / "a b"))
    assert store_url(local) == str(tmp_path / "a b")
    assert store_from_url(store_url(local)).root == local.root
    s3 = S3Store(bucket=s3_bucket, prefix="/team/catalog/", s3=s3_resource)
    assert store_url(s3) == f"s3://{s3_bucket}/team/catalog"
    assert "testing" not in store_url(s3)            # never the credentials
    back = store_from_url(store_url(s3), s3=s3_resource)
    assert (back.bucket, back.prefix) == (s3_bucket, "team/catalog")

"""Fixtures of the store tests: one store per backend (a local folder, and S3 on moto's
server over HTTP), so that behaviour both backends promise is tested on both."""

from __future__ import annotations

from pathlib import Path

import pytest

from cataloger_dagster.resources.store import LocalStore, S3Store, CatalogStore


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path) -> CatalogStore:
    if request.param == "local":
        return LocalStore(root=str(tmp_path / "store"))
    s3 = request.getfixturevalue("s3_resource")
    bucket = request.getfixturevalue("s3_bucket")
    # a nested key prefix, so that every key the store makes must go through it
    return S3Store(bucket=bucket, prefix="cat/alog", s3=s3)


@pytest.fixture
def raw_object():
    """Reads what a uri names, bypassing the store (the file or the S3 object)."""

    def read(store: CatalogStore, uri: str) -> bytes:
        if isinstance(store, LocalStore):
            return Path(uri).read_bytes()
        assert uri.startswith(f"s3://{store.bucket}/cat/alog/")
        key = uri[len(f"s3://{store.bucket}/"):]
        return store.s3_resource().get_client().get_object(Bucket=store.bucket, Key=key)["Body"].read()

    return read

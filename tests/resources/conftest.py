"""Shared fixtures for resources: credentials and buckets on the S3 server (tests/conftest.py)."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def aws_dummy_credentials(monkeypatch):
    """Dummy credentials, so no real account is ever touched."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def s3_resource(s3_server, aws_dummy_credentials):
    from dagster_aws.s3 import S3Resource

    return S3Resource(endpoint_url=s3_server, region_name="us-east-1")


@pytest.fixture
def s3_bucket(s3_resource) -> str:
    """A fresh, empty bucket on the moto server."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    s3_resource.get_client().create_bucket(Bucket=name)
    return name

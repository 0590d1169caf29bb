"""Shared fixtures for resources: an S3 resource and buckets on the S3 server (tests/conftest.py)."""

from __future__ import annotations

import uuid

import pytest


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

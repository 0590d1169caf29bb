"""The store resource: every run's scripts, JSON results and HTML pages.

`base` holds the logic over a handful of storage primitives; each backend
(`local`, `s3`) implements only those primitives in a file of its own.  The
layout they share (names, timestamps) is `cataloger_dagster.core.layout`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from cataloger_dagster.resources.store.base import (
    HASH_MARK,
    INDEX_FILE,
    INDEX_HISTORY,
    LATEST_WINDOW,
    MAX_SEGMENT,
    RUN_FILE,
    ArtifactExistsError,
    ScriptRecord,
    CatalogStore,
    StoreError,
    format_timestamp,
    metrics_filename,
    name_of_folder,
    new_timestamp,
    normalize_timestamp,
    store_name,
    table_prefix,
)
from cataloger_dagster.resources.store.local import LocalStore

if TYPE_CHECKING:
    from dagster_aws.s3 import S3Resource

    from cataloger_dagster.resources.store.s3 import S3Store


def __getattr__(name: str):
    # the S3 backend on first use: dagster-aws takes seconds to import (all its components), and
    # a process on a local store (each run's, each step's) never needs it
    if name == "S3Store":
        from cataloger_dagster.resources.store.s3 import S3Store

        return S3Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ArtifactExistsError",
    "HASH_MARK",
    "INDEX_FILE",
    "INDEX_HISTORY",
    "LATEST_WINDOW",
    "LocalStore",
    "MAX_SEGMENT",
    "RUN_FILE",
    "S3Store",
    "ScriptRecord",
    "CatalogStore",
    "StoreError",
    "format_timestamp",
    "metrics_filename",
    "name_of_folder",
    "new_timestamp",
    "normalize_timestamp",
    "store_from_url",
    "store_url",
    "store_name",
    "table_prefix",
]


def store_from_url(url: str, *, s3: S3Resource | None = None, **policy: Any) -> CatalogStore:
    """``s3://bucket/prefix`` -> S3Store; a path or ``file://`` URL ->
    LocalStore.  S3 settings not given in ``s3`` come from the usual AWS
    environment (AWS_PROFILE, AWS_ENDPOINT_URL, AWS_DEFAULT_REGION...).
    ``policy``: the store's `sensitive_values` and `sensitive_key`."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the store location is empty; give a folder or s3://bucket/prefix")
    url = url.strip()
    scheme = urlparse(url).scheme.lower()
    if scheme == "s3":
        parsed = urlparse(url)
        if not parsed.netloc:
            raise ValueError(f"S3 store URL {url!r} has no bucket; use s3://bucket/prefix")
        from cataloger_dagster.resources.store.s3 import S3Store

        return S3Store(bucket=parsed.netloc, prefix=parsed.path.strip("/"), s3=s3, **policy)
    if scheme == "file":
        return LocalStore(root=unquote(urlparse(url).path), **policy)
    if len(scheme) > 1 and "://" in url:
        raise ValueError(f"unsupported store URL {url!r}: use a folder path or s3://bucket/prefix")
    return LocalStore(root=str(Path(url).expanduser()), **policy)


def store_url(store: CatalogStore) -> str:
    """Where ``store`` is, as `store_from_url` reads it back (an absolute folder or
    ``s3://bucket/prefix``): what a command shown to people passes as ``--store``.  Holds no
    credentials; an S3 endpoint other than AWS's comes from the reader's own environment."""
    if isinstance(store, LocalStore):
        return str(Path(store.root).expanduser().absolute())
    from cataloger_dagster.resources.store.s3 import S3Store

    if isinstance(store, S3Store):
        return f"s3://{store.bucket}/{store.prefix.strip('/')}".rstrip("/")
    raise TypeError(f"no URL for a {type(store).__name__}")

"""The S3 backend of the store, through dagster-aws's `S3Resource`.

Every write into a run folder is a conditional put (``IfNoneMatch='*'``),
which S3 evaluates atomically.  moto's server honours the header but checks
then writes, so run claims are also serialized within the process; and each
conditional put is preceded by a HEAD so that S3-compatible servers that
ignore If-None-Match still refuse to overwrite (not atomically there).
"""

from __future__ import annotations

import mimetypes
import threading
from contextlib import contextmanager
from typing import Any

from dagster_aws.s3 import S3Resource
from dagster_aws.s3.resources import ResourceWithS3Configuration
from pydantic import Field, PrivateAttr

from cataloger_dagster.core.redaction import MASK, url_without_userinfo
from cataloger_dagster.resources.store.base import (
    RUN_FILE,
    ArtifactExistsError,
    CatalogStore,
    StoreError,
    _process_lock,
)

_S3_FIELDS = tuple(ResourceWithS3Configuration.model_fields)
_SECRET_FIELDS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token")
_EXISTS_CODES = {"PreconditionFailed", "ConditionalRequestConflict", "412"}
_MISSING_KEY_CODES = {"NoSuchKey", "404", "NotFound"}


class S3Store(CatalogStore, ResourceWithS3Configuration):
    """The store in an S3 bucket, through dagster-aws's `S3Resource`.

    The S3 settings are this resource's own fields (those of `S3Resource`)
    rather than a nested `S3Resource`: Dagster 1.13 emits an internal
    DeprecationWarning when it initializes a nested resource.  Pass
    ``s3=S3Resource(...)`` to copy its settings.
    """

    bucket: str = Field(description="Bucket holding the store; it must exist.")
    prefix: str = Field(default="", description="Key prefix of the store in the bucket.")

    _client: Any = PrivateAttr(default=None)
    _client_lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, *, bucket: str, prefix: str = "", s3: S3Resource | None = None, **settings: Any):
        if s3 is not None:
            for name in _S3_FIELDS:
                settings.setdefault(name, getattr(s3, name))
        # the fields reach pydantic's own __init__, which mypy sees only as the parent class's
        super().__init__(**{"bucket": bucket, "prefix": prefix, **settings})

    def __repr_args__(self):
        for name, value in super().__repr_args__():
            if name in _SECRET_FIELDS and value:
                value = MASK
            elif name == "endpoint_url" and value:
                value = url_without_userinfo(value)
            yield name, value

    def s3_resource(self) -> S3Resource:
        return S3Resource(**{name: getattr(self, name) for name in _S3_FIELDS})

    def describe(self) -> str:
        where = f"s3://{self.bucket}/{self.prefix.strip('/')}".rstrip("/")
        if self.endpoint_url:
            where += f" at {url_without_userinfo(self.endpoint_url)}"
        return f"S3 {where}"

    # ---- client and errors

    def _s3(self) -> Any:
        with self._client_lock:
            if self._client is None:
                client = self.s3_resource().get_client()
                self._check_bucket(client)
                self._client = client
            return self._client

    def _check_bucket(self, client: Any) -> None:
        from botocore.exceptions import ClientError

        try:
            with self._errors(""):
                client.head_bucket(Bucket=self.bucket)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchBucket", "NotFound"):
                raise self._missing_bucket() from None
            raise self._translate(e, "") from None

    def _missing_bucket(self) -> StoreError:
        endpoint = f" at {url_without_userinfo(self.endpoint_url)}" if self.endpoint_url else ""
        return StoreError(
            f"S3 bucket {self.bucket!r}{endpoint} does not exist; create it (for example "
            f"`aws s3 mb s3://{self.bucket}`) or set CATALOGER_STORE to an existing bucket"
        )

    def _translate(self, e: Exception, key: str) -> Exception:
        from botocore.exceptions import ClientError

        where = self._key_uri(key) if key else f"s3://{self.bucket}"
        if isinstance(e, ClientError):
            code = e.response.get("Error", {}).get("Code", "")
            if code == "NoSuchBucket":
                return self._missing_bucket()
            if code in (
                "AccessDenied",
                "403",
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
                "ExpiredToken",
                "InvalidToken",
            ):
                return StoreError(
                    f"S3 refused access to {where} ({code}); check the AWS credentials "
                    "(AWS_PROFILE, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and the "
                    "bucket policy"
                )
            if code in ("301", "PermanentRedirect", "AuthorizationHeaderMalformed"):
                return StoreError(
                    f"S3 bucket {self.bucket!r} is in another region ({code}); set "
                    "AWS_DEFAULT_REGION (or region_name) to the bucket's region"
                )
            return StoreError(f"S3 request for {where} failed ({code or e})")
        return StoreError(f"cannot use S3 store {where}: {type(e).__name__}: {e}")

    @contextmanager
    def _errors(self, key: str):
        """Translate botocore errors other than ClientError (credentials, network)."""
        from botocore.exceptions import BotoCoreError, EndpointConnectionError, NoCredentialsError

        try:
            yield
        except NoCredentialsError:
            raise StoreError(
                f"no AWS credentials found for s3://{self.bucket}; set AWS_PROFILE or "
                "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
            ) from None
        except EndpointConnectionError:
            endpoint = url_without_userinfo(self.endpoint_url) if self.endpoint_url else "AWS S3"
            raise StoreError(
                f"cannot reach {endpoint} for s3://{self.bucket}; check the network and the endpoint (AWS_ENDPOINT_URL)"
            ) from None
        except BotoCoreError as e:
            raise self._translate(e, key) from None

    def _full(self, key: str) -> str:
        return "/".join(p for p in (self.prefix.strip("/"), key) if p)

    # ---- primitives

    def _read(self, key: str) -> bytes | None:
        from botocore.exceptions import ClientError

        client = self._s3()
        try:
            with self._errors(key):
                return client.get_object(Bucket=self.bucket, Key=self._full(key))["Body"].read()
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in _MISSING_KEY_CODES:
                return None
            raise self._translate(e, key) from None

    def _exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        client = self._s3()
        try:
            with self._errors(key):
                client.head_object(Bucket=self.bucket, Key=self._full(key))
            return True
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in _MISSING_KEY_CODES:
                return False
            raise self._translate(e, key) from None

    def _put(self, key: str, data: bytes, *, if_absent: bool) -> None:
        from botocore.exceptions import ClientError

        client = self._s3()
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self._full(key), "Body": data}
        content_type = mimetypes.guess_type(key)[0]
        if content_type:
            kwargs["ContentType"] = (
                f"{content_type}; charset=utf-8"
                if content_type.startswith("text/") or content_type == "application/json"
                else content_type
            )
        if if_absent:
            kwargs["IfNoneMatch"] = "*"
        try:
            with self._errors(key):
                client.put_object(**kwargs)
        except ClientError as e:
            error = e.response.get("Error", {})
            status = str(e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
            if if_absent and (error.get("Code") in _EXISTS_CODES or status in ("412", "409")):
                raise ArtifactExistsError(self._key_uri(key)) from None
            raise self._translate(e, key) from None

    def _write_new(self, key: str, data: bytes) -> None:
        # The conditional put is the guarantee; the check first also protects
        # on S3-compatible servers that ignore If-None-Match.
        if self._exists(key):
            raise ArtifactExistsError(self._key_uri(key))
        self._put(key, data, if_absent=True)

    def _replace(self, key: str, data: bytes) -> None:
        self._put(key, data, if_absent=False)

    def _list(self, key: str) -> tuple[list[str], list[str]]:
        from botocore.exceptions import ClientError

        client = self._s3()
        base = self._full(key) + "/"
        folders, files = [], []
        try:
            with self._errors(key):
                pages = client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base, Delimiter="/")
                for page in pages:
                    folders += [p["Prefix"][len(base) :].rstrip("/") for p in page.get("CommonPrefixes", [])]
                    files += [o["Key"][len(base) :] for o in page.get("Contents", [])]
        except ClientError as e:
            raise self._translate(e, key) from None
        return folders, files

    def _list_after(self, folder: str, after: str) -> list[str]:
        # one page per 1,000 names written since `after`, however long the log
        from botocore.exceptions import ClientError

        client = self._s3()
        base = self._full(folder) + "/"
        names: list[str] = []
        try:
            with self._errors(folder):
                pages = client.get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=base, Delimiter="/", StartAfter=base + after
                )
                for page in pages:
                    names += [o["Key"][len(base) :] for o in page.get("Contents", [])]
        except ClientError as e:
            raise self._translate(e, folder) from None
        return sorted(n for n in names if n > after and not n.startswith("."))

    def _claim(self, folder: str, run_file: bytes) -> bool:
        # Serializes claims within this process.  Real S3 evaluates
        # IfNoneMatch atomically; moto's server checks then writes, so two
        # threads could otherwise both win the same folder there.
        with _process_lock("claim", self._key_uri(folder.rsplit("/", 1)[0])):
            if any(self._list(folder)):
                return False  # someone wrote into this folder without a claim
            try:
                self._put(f"{folder}/{RUN_FILE}", run_file, if_absent=True)
            except ArtifactExistsError:
                return False
            return True

    def _release(self, folder: str) -> None:
        client = self._s3()
        with self._errors(folder):
            client.delete_object(Bucket=self.bucket, Key=self._full(f"{folder}/{RUN_FILE}"))

    def _key_uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._full(key)}"

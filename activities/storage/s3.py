"""S3 (any endpoint: AWS, MinIO, SeaweedFS) through aioboto3, failing closed.

Only a definite "no such key" is missing. Access denied and bad credentials are
`AccessDeniedError` (never retried), a missing bucket is a configuration error,
unreachable endpoints and 5xx are `TransportError` (retried within a deadline),
and anything else unclassified is an `InfraError`: never read as "missing".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aioboto3
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    PartialCredentialsError,
    ReadTimeoutError,
)

from activities.storage.base import (
    DEFAULT_MAX_BYTES,
    MAX_LISTED_KEYS,
    ArtifactMissingError,
    ArtifactTooLargeError,
    NotTextError,
    TextWrite,
)
from activities.storage.s3_content import ContentEtags
from npaflow.cache import ObjectFacts
from npaflow.errors import (
    AccessDeniedError,
    ConfigurationError,
    InfraError,
    NpaflowError,
    TransportError,
)
from npaflow.integers import plain_int

_ACCESS_CODES = {
    "AccessDenied",
    "403",
    "Forbidden",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "TokenRefreshRequired",
    "AllAccessDisabled",
    "AccountProblem",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
}
_TRANSIENT_CODES = {
    "SlowDown",
    "ServiceUnavailable",
    "InternalError",
    "RequestTimeout",
    "RequestTimeTooSkewed",
    "Throttling",
    "ThrottlingException",
}
_UNREACHABLE = (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ConnectionClosedError)

#: CopyObject copies at most 5 GiB in one request; larger objects take S3's multipart copy.
MAX_SINGLE_COPY_BYTES = 5 * 1024**3


def split_s3_uri(uri: str) -> tuple[str, str]:
    """Return (bucket, key) of `s3://bucket/key`.

    Raises:
        ConfigurationError: not an s3:// URI with a bucket.
    """
    if not uri.startswith("s3://"):
        raise ConfigurationError(f"expected s3:// URI, got {uri!r}")
    bucket, _, key = uri[len("s3://") :].partition("/")
    if not bucket:
        raise ConfigurationError(f"s3 URI has no bucket: {uri!r}")
    return bucket, key


def classify_s3_error(exc: Exception, uri: str) -> NpaflowError:
    """The npaflow error an S3 failure is: access, configuration, transport, or unknown."""
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return AccessDeniedError(
            f"{uri}: no usable S3 credentials in the worker's environment "
            "(set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)"
        )
    if isinstance(exc, _UNREACHABLE):
        return TransportError(f"{uri}: S3 endpoint unreachable: {exc}")
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _ACCESS_CODES or status == 403:
            return AccessDeniedError(
                f"{uri}: access denied ({code or status}): check the worker's "
                "S3 credentials and the bucket policy"
            )
        if code == "NoSuchBucket":
            return ConfigurationError(f"{uri}: bucket does not exist")
        if code in _TRANSIENT_CODES or status >= 500:
            return TransportError(f"{uri}: S3 error {code or status}: {error.get('Message', '')}")
        return InfraError(f"{uri}: S3 error {code or status}: {error.get('Message', '')}")
    if isinstance(exc, BotoCoreError):
        return TransportError(f"{uri}: {type(exc).__name__}: {exc}")
    return InfraError(f"{uri}: {type(exc).__name__}: {exc}")


class S3Storage:
    """Objects in S3-compatible storage; credentials come from the worker's environment."""

    def __init__(self, endpoint_url: str = "", region: str = "", page_size: int = 1000) -> None:
        self.endpoint_url = endpoint_url or None
        self.region = region or None
        self.page_size = page_size
        self.session = aioboto3.Session()
        self._buckets: set[str] = set()
        self._content = ContentEtags(self._client)

    @asynccontextmanager
    async def _client(self, uri: str) -> AsyncIterator[Any]:
        """An S3 client whose failures come out as npaflow errors."""
        try:
            async with self.session.client(
                "s3", endpoint_url=self.endpoint_url, region_name=self.region
            ) as s3:
                yield s3
        except ArtifactMissingError:
            raise
        except (ClientError, BotoCoreError, OSError) as exc:
            raise classify_s3_error(exc, uri) from exc

    async def read_text(self, uri: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
        """Return the object's text, fetching at most `max_bytes` + 1 bytes of it.

        Raises:
            ArtifactMissingError: there is definitely no such key.
            ArtifactTooLargeError: the object is larger than `max_bytes`.
        """
        bucket, key = split_s3_uri(uri)
        async with self._client(uri) as s3:
            try:
                response = await s3.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{max_bytes}")
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code")
                if code == "NoSuchKey":
                    raise ArtifactMissingError(uri) from None
                if code == "InvalidRange":  # an empty object has no byte 0
                    return ""
                raise
            body = await response["Body"].read()
        total = str(response.get("ContentRange") or "").rpartition("/")[2]
        if len(body) > max_bytes or (plain_int(total) or 0) > max_bytes:
            raise ArtifactTooLargeError(uri, max_bytes)
        try:
            return bytes(body).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotTextError(f"{uri}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> str:
        """Put the object; return its ETag."""
        bucket, key = split_s3_uri(uri)
        async with self._client(uri) as s3:
            response = await s3.put_object(
                Bucket=bucket, Key=key, Body=text.encode("utf-8"), ContentType=content_type
            )
        return str(response.get("ETag") or "")

    async def write_texts(self, writes: Sequence[TextWrite]) -> list[str]:
        """Put each in order; return their ETags."""
        return [await self.write_text(*write) for write in writes]

    async def version(self, uri: str) -> str | None:
        """The object's ETag (HEAD); None when the key does not exist."""
        head = await self._head(uri, bucket_must_exist=False)
        return None if head is None else str(head.get("ETag") or "")

    async def size(self, uri: str) -> int | None:
        """HEAD the object; None only when the bucket exists and the key does not."""
        head = await self._head(uri, bucket_must_exist=True)
        return None if head is None else int(head.get("ContentLength", 0))

    async def facts(self, uri: str) -> ObjectFacts | None:
        """HEAD the object: size, content ETag and version id (None when the key does not exist)."""
        head = await self._head(uri, bucket_must_exist=True)
        if head is None:
            return None
        return ObjectFacts(
            key="",
            size=int(head.get("ContentLength", 0)),
            etag=await self._content.of(uri, *split_s3_uri(uri), head),
            version_id=str(head.get("VersionId") or ""),
        )

    async def delete(self, uri: str) -> bool:
        """DELETE the object (HEAD first, so the answer says whether it was there)."""
        if await self._head(uri, bucket_must_exist=True) is None:
            return False
        bucket, key = split_s3_uri(uri)
        async with self._client(uri) as s3:
            await s3.delete_object(Bucket=bucket, Key=key)
        return True

    async def copy(self, source_uri: str, target_uri: str) -> None:
        """Server-side copy (CopyObject; S3's managed multipart copy above 5 GiB)."""
        source_bucket, source_key = split_s3_uri(source_uri)
        bucket, key = split_s3_uri(target_uri)
        source = {"Bucket": source_bucket, "Key": source_key}
        async with self._client(source_uri) as s3:
            try:
                head = await s3.head_object(**source)
                if int(head.get("ContentLength", 0)) > MAX_SINGLE_COPY_BYTES:
                    await s3.copy(source, bucket, key)
                else:
                    await s3.copy_object(Bucket=bucket, Key=key, CopySource=source)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    raise ArtifactMissingError(source_uri) from None
                raise

    async def _head(self, uri: str, *, bucket_must_exist: bool) -> dict[str, Any] | None:
        """The object's HEAD answer; None when it does not exist (a missing bucket raises if asked)."""
        bucket, key = split_s3_uri(uri)
        async with self._client(uri) as s3:
            try:
                return dict(await s3.head_object(Bucket=bucket, Key=key))
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                    raise
                if bucket_must_exist:
                    await self._require_bucket(s3, bucket)  # a HEAD 404 does not say which is missing
                return None

    async def _require_bucket(self, s3: Any, bucket: str) -> None:
        if bucket in self._buckets:
            return
        try:
            await s3.head_bucket(Bucket=bucket)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchBucket", "NotFound"):
                raise ConfigurationError(f"s3://{bucket}: bucket does not exist") from None
            raise
        self._buckets.add(bucket)

    async def list_keys(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[str]:
        """List the keys under the prefix, following continuation tokens, at most `limit`."""
        return [facts.key for facts in await self.list_facts(prefix_uri, limit=limit)]

    async def list_facts(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[ObjectFacts]:
        """Each object under the prefix with its size and content ETag, from the listing itself."""
        bucket, prefix = split_s3_uri(prefix_uri)
        found: list[ObjectFacts] = []
        async with self._client(prefix_uri) as s3:
            token: str | None = None
            while True:
                kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": self.page_size}
                if token:
                    kwargs["ContinuationToken"] = token
                page = await s3.list_objects_v2(**kwargs)
                for item in page.get("Contents", []):
                    uri = f"s3://{bucket}/{item['Key']}"
                    found.append(
                        ObjectFacts(
                            key=item["Key"][len(prefix) :],
                            size=int(item.get("Size", 0)),
                            etag=await self._content.of(uri, bucket, item["Key"], item),
                        )
                    )
                if not page.get("IsTruncated") or len(found) >= limit:
                    return found[:limit]
                token = page.get("NextContinuationToken")

"""S3 (any endpoint: AWS, MinIO, SeaweedFS) through aioboto3."""

from __future__ import annotations

from typing import Any

import aioboto3
from botocore.exceptions import ClientError

from activities.storage.base import ArtifactMissingError
from npaflow.errors import ConfigurationError

_MISSING = {"404", "403", "NoSuchKey", "NotFound", "NoSuchBucket"}


def split_s3_uri(uri: str) -> tuple[str, str]:
    """Return (bucket, key) of `s3://bucket/key`.

    Raises:
        ConfigurationError: not an s3:// URI with a bucket.
    """
    if not uri.startswith("s3://"):
        raise ConfigurationError(f"expected s3:// URI, got {uri!r}")
    bucket, _, key = uri[len("s3://"):].partition("/")
    if not bucket:
        raise ConfigurationError(f"s3 URI has no bucket: {uri!r}")
    return bucket, key


class S3Storage:
    """Objects in S3-compatible storage; credentials come from the worker's environment."""

    def __init__(self, endpoint_url: str = "", region: str = "", page_size: int = 1000) -> None:
        self.endpoint_url = endpoint_url or None
        self.region = region or None
        self.page_size = page_size
        self.session = aioboto3.Session()

    def _client(self) -> Any:
        return self.session.client("s3", endpoint_url=self.endpoint_url, region_name=self.region)

    async def read_text(self, uri: str) -> str:
        """Return the object's text."""
        bucket, key = split_s3_uri(uri)
        async with self._client() as s3:
            try:
                response = await s3.get_object(Bucket=bucket, Key=key)
                body = await response["Body"].read()
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in _MISSING:
                    raise ArtifactMissingError(uri) from None
                raise
        return body.decode("utf-8")

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> None:
        """Put the object."""
        bucket, key = split_s3_uri(uri)
        async with self._client() as s3:
            await s3.put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"),
                                ContentType=content_type)

    async def size(self, uri: str) -> int | None:
        """HEAD the object; None when it does not exist."""
        bucket, key = split_s3_uri(uri)
        async with self._client() as s3:
            try:
                head = await s3.head_object(Bucket=bucket, Key=key)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in _MISSING:
                    return None
                raise
        return int(head.get("ContentLength", 0))

    async def list_keys(self, prefix_uri: str) -> list[str]:
        """List every key under the prefix, following continuation tokens."""
        bucket, prefix = split_s3_uri(prefix_uri)
        keys: list[str] = []
        async with self._client() as s3:
            token: str | None = None
            while True:
                kwargs = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": self.page_size}
                if token:
                    kwargs["ContinuationToken"] = token
                page = await s3.list_objects_v2(**kwargs)
                keys.extend(item["Key"][len(prefix):] for item in page.get("Contents", []))
                if not page.get("IsTruncated"):
                    return keys
                token = page.get("NextContinuationToken")

"""The content evidence of an S3 object: its ETag where that is the MD5 of its bytes.

A single-part object's ETag is the MD5 of its bytes. A multipart object's ETag
is the MD5 of its parts' MD5s plus "-N": it depends on how the bytes were cut
into parts, so the same bytes copied (CopyObject writes one part) read as
different, and a store that re-chunks says nothing about content. For those the
evidence is computed: the MD5 of the bytes, read once per object version (GET
with If-Match, so a rewrite during the read fails instead of mixing versions),
written as the single-part ETag the same bytes would have. Copies and their
source then compare alike, whatever their part layout.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

#: Computed digests remembered in this process (by object, ETag, version and mtime).
MAX_REMEMBERED = 10_000
_CHUNK = 1024 * 1024

ClientFactory = Callable[[str], AbstractAsyncContextManager[Any]]


def is_multipart(etag: str) -> bool:
    """True for a multipart upload's ETag ("<md5 of part md5s>-<parts>")."""
    return "-" in etag.strip('"')


class ContentEtags:
    """The single-part ETag of each object's bytes, computing it for multipart objects."""

    def __init__(self, client: ClientFactory) -> None:
        self._client = client
        self._known: dict[tuple[str, str, str, str], str] = {}

    async def of(self, uri: str, bucket: str, key: str, answer: dict[str, Any]) -> str:
        """The evidence for one HEAD or listing answer (its ETag, or the MD5 of its bytes)."""
        etag = str(answer.get("ETag") or "")
        if not is_multipart(etag):
            return etag
        memo = (uri, etag, str(answer.get("VersionId") or ""), str(answer.get("LastModified") or ""))
        known = self._known.get(memo)
        if known is None:
            known = f'"{await self._md5(uri, bucket, key, etag)}"'
            if len(self._known) >= MAX_REMEMBERED:
                self._known.clear()
            self._known[memo] = known
        return known

    async def _md5(self, uri: str, bucket: str, key: str, etag: str) -> str:
        digest = hashlib.md5(usedforsecurity=False)
        async with self._client(uri) as s3:
            response = await s3.get_object(Bucket=bucket, Key=key, IfMatch=etag)
            async for chunk in _chunks(response["Body"]):
                digest.update(chunk)
        return digest.hexdigest()


async def _chunks(body: Any) -> AsyncIterator[bytes]:
    while chunk := await body.read(_CHUNK):
        yield bytes(chunk)

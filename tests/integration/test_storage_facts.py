"""What the stage cache asks of storage: each object's facts, and copies that keep the bytes.

Against the real S3 test server and the local file system.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import pytest

import activities.storage.file_digests as file_storage
from activities.storage import ArtifactMissingError, FileStorage, S3Storage, TextWrite
from tests.s3_server import BUCKET, S3Server

pytestmark = pytest.mark.integration


async def test_s3_facts_change_with_the_bytes_and_a_copy_keeps_them(s3_server: S3Server) -> None:
    storage = S3Storage(s3_server.endpoint)
    prefix = f"s3://{BUCKET}/facts-{uuid.uuid4().hex[:6]}/"
    await storage.write_text(prefix + "run-a/model.bin", "weights-1")
    first = await storage.facts(prefix + "run-a/model.bin")
    assert first is not None and first.size == len("weights-1") and first.etag

    await storage.copy(prefix + "run-a/model.bin", prefix + "run-b/model.bin")
    assert await storage.read_text(prefix + "run-b/model.bin") == "weights-1"

    await storage.write_text(prefix + "run-a/model.bin", "weights-2")
    second = await storage.facts(prefix + "run-a/model.bin")
    assert second is not None and second.etag != first.etag
    assert await storage.facts(prefix + "run-a/missing.bin") is None


async def test_s3_copy_of_a_missing_object_says_it_is_missing(s3_server: S3Server) -> None:
    storage = S3Storage(s3_server.endpoint)
    prefix = f"s3://{BUCKET}/facts-{uuid.uuid4().hex[:6]}/"
    with pytest.raises(ArtifactMissingError):
        await storage.copy(prefix + "nothing.bin", prefix + "copy.bin")


async def test_file_facts_change_with_a_rewrite_and_a_copy_keeps_the_bytes(tmp_path: Path) -> None:
    storage = FileStorage()
    source = tmp_path / "run-a" / "model.bin"
    source.parent.mkdir()
    source.write_bytes(b"weights-1")
    first = await storage.facts(str(source))
    assert first is not None and first.size == 9

    target = tmp_path / "run-b" / "deep" / "model.bin"
    await storage.copy(str(source), str(target))
    assert target.read_bytes() == b"weights-1"

    source.write_bytes(b"weights-22")
    second = await storage.facts(str(source))
    assert second is not None and second.etag != first.etag
    assert await storage.facts(str(tmp_path / "missing.bin")) is None
    with pytest.raises(ArtifactMissingError):
        await storage.copy(str(tmp_path / "missing.bin"), str(target))


async def test_listed_facts_carry_each_object_s_size_and_checksum_on_s3_and_files(
    s3_server: S3Server, tmp_path: Path
) -> None:
    s3 = S3Storage(s3_server.endpoint, page_size=2)
    prefix = f"s3://{BUCKET}/facts-{uuid.uuid4().hex[:6]}/shards/"
    for name, body in (("a", "1"), ("b", "22"), ("c", "333")):
        await s3.write_text(prefix + name, body)
    listed = await s3.list_facts(prefix)
    assert [(f.key, f.size) for f in listed] == [("a", 1), ("b", 2), ("c", 3)]
    assert [f.etag for f in listed] == [(await s3.facts(prefix + f.key)).etag for f in listed]  # type: ignore[union-attr]

    files = FileStorage()
    for name, body in (("a", "1"), ("sub/b", "22")):
        (tmp_path / "shards" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "shards" / name).write_text(body)
    listed = await files.list_facts(str(tmp_path / "shards") + "/")
    assert [(f.key, f.size) for f in listed] == [("a", 1), ("sub/b", 2)]
    copy = tmp_path / "copy.bin"
    await files.copy(str(tmp_path / "shards" / "a"), str(copy))
    assert (await files.facts(str(copy))) == listed[0].model_copy(update={"key": ""})


@pytest.mark.parametrize("scheme", ["file", "s3"])
async def test_a_batch_of_writes_lands_each_file_and_returns_the_version_each_now_has(
    scheme: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if scheme == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        storage: FileStorage | S3Storage = S3Storage(server.endpoint)
        prefix = f"s3://{BUCKET}/batch-{uuid.uuid4().hex[:6]}/"
    else:
        storage, prefix = FileStorage(), f"file://{tmp_path}/run/"
    writes = [
        TextWrite(prefix + "status.json", "{}"),
        TextWrite(prefix + "spec.yaml", "a: 1", "application/yaml"),
    ]
    versions = await storage.write_texts(writes)
    assert [await storage.read_text(uri) for uri, _, _ in writes] == ["{}", "a: 1"]
    assert versions == [await storage.version(uri) for uri, _, _ in writes]
    assert await storage.write_texts([]) == []


async def test_file_facts_see_an_in_place_rewrite_that_keeps_inode_size_and_mtime(tmp_path: Path) -> None:
    storage = FileStorage()
    path = tmp_path / "seed.txt"
    path.write_bytes(b"alpha\n")
    before = path.stat()
    first = await storage.facts(str(path))
    with open(path, "r+b") as stream:
        stream.write(b"bravo\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = await storage.facts(str(path))
    assert first is not None and second is not None
    assert second.etag == "sha256:" + hashlib.sha256(b"bravo\n").hexdigest() != first.etag


async def test_a_file_hashed_within_a_tick_of_its_change_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Racily clean (git's word): a rewrite in the same timestamp tick may keep every stat field."""
    path = tmp_path / "fresh.txt"
    path.write_bytes(b"one\n")
    storage = FileStorage()
    assert await storage.facts(str(path)) is not None
    assert storage._digests.known == {}  # changed just now: hashed again on the next look
    monkeypatch.setattr(file_storage, "RACY_NANOSECONDS", 0)
    assert await storage.facts(str(path)) is not None
    assert list(storage._digests.known.values()) == [hashlib.sha256(b"one\n").hexdigest()]


async def test_a_new_file_storage_trusts_no_digest_another_one_remembered(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"weights-1")
    old = await FileStorage().facts(str(path))
    fresh = await FileStorage().facts(str(path))
    assert old is not None and fresh is not None and old.etag == fresh.etag


def put_multipart(s3_server: S3Server, key: str, part: bytes, parts: int = 2) -> str:
    """Upload `part` * parts as a multipart object (5 MiB parts); return the ETag S3 gave it."""
    s3 = s3_server.client()
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
    done = [
        {
            "ETag": s3.upload_part(Bucket=BUCKET, Key=key, PartNumber=n, UploadId=upload, Body=part)["ETag"],
            "PartNumber": n,
        }
        for n in range(1, parts + 1)
    ]
    answer = s3.complete_multipart_upload(
        Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={"Parts": done}
    )
    return str(answer["ETag"])


async def test_a_multipart_object_is_known_by_the_md5_of_its_bytes_and_a_same_size_rewrite_is_seen(
    s3_server: S3Server,
) -> None:
    storage = S3Storage(s3_server.endpoint)
    key = f"facts-{uuid.uuid4().hex[:6]}/ckpt.bin"
    alpha, bravo = b"a" * (5 * 1024 * 1024), b"b" * (5 * 1024 * 1024)
    assert put_multipart(s3_server, key, alpha).strip('"').endswith("-2")
    first = await storage.facts(f"s3://{BUCKET}/{key}")
    assert first is not None and first.etag == f'"{hashlib.md5(alpha * 2).hexdigest()}"'

    await storage.copy(f"s3://{BUCKET}/{key}", f"s3://{BUCKET}/{key}.copy")  # one part now
    copied = await storage.facts(f"s3://{BUCKET}/{key}.copy")
    assert copied is not None and copied.etag == first.etag
    (listed,) = await storage.list_facts(f"s3://{BUCKET}/{key.rsplit('/', 1)[0]}/ckpt.bin.c")
    assert listed.etag == first.etag

    put_multipart(s3_server, key, bravo)
    second = await storage.facts(f"s3://{BUCKET}/{key}")
    assert second is not None and second.size == first.size
    assert second.etag == f'"{hashlib.md5(bravo * 2).hexdigest()}"' != first.etag

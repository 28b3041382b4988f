"""What the stage cache asks of storage: each object's facts, and copies that keep the bytes.

Against the real S3 test server and the local file system.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

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

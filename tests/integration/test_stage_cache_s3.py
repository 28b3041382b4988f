"""The stage cache's activities on the real S3 test server: ETag keys, verification, server-side copies."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from activities.cache import CacheActivities
from activities.context import ActivityContext
from activities.storage import S3Storage, StorageRouter
from npaflow.plan import build_plan
from npaflow.runtime.cache.messages import CacheLookupInput, CacheMode, CacheStoreInput
from npaflow.traversal.models import Wave, WaveKind
from npaflow.waves import WaveKey, WaveMember
from tests.helpers import CATALOG, load_doc, minimal_doc
from tests.s3_outage import S3Outage
from tests.s3_server import BUCKET, S3Server

pytestmark = pytest.mark.integration


def cached_wave(run_id: str, source: str, target: str) -> Wave:
    """One cached state reading `source` and writing `target` (which may hold {{run.id}}), as a wave."""
    doc = minimal_doc(
        work={
            "run": {"argv": ["train"]},
            "inputs": [{"uri": source}],
            "outputs": [{"uri": target}],
            "cache": True,
            "next": "done",
        }
    )
    step = build_plan(load_doc(doc), CATALOG, run_id=run_id).steps[0]
    key = WaveKey(sequence=1, members=(WaveMember(state="work"),))
    return Wave(sequence=1, key=key, kind=WaveKind.SERIAL, label="work", steps=(step,), occurrence=1)


def wave_for(run_id: str, prefix: str) -> Wave:
    return cached_wave(run_id, f"{prefix}/data/", f"{prefix}/{{{{run.id}}}}/model/")


def lookup(wave: Wave, run_id: str, root: str) -> CacheLookupInput:
    return CacheLookupInput(
        run_id=run_id, wave=wave, catalog=CATALOG, cache_root=root, scope="t", mode=CacheMode.ON
    )


async def test_an_s3_output_is_served_by_a_server_side_copy_and_new_input_content_misses(
    s3_server: S3Server, tmp_path: Path
) -> None:
    storage = S3Storage(s3_server.endpoint)
    prefix = f"s3://{BUCKET}/cache-{uuid.uuid4().hex[:6]}"
    root = f"{prefix}/.npaflow-cache"
    cache = CacheActivities(
        ActivityContext(
            home=tmp_path, backends={}, worker_id="w", task_queue="q", storage=StorageRouter(storage)
        )
    )
    await storage.write_text(f"{prefix}/data/shard-0", "tokens")
    await storage.write_text(f"{prefix}/run-a/model/weights.bin", "weights")
    first = await cache.cache_lookup(lookup(wave_for("run-a", prefix), "run-a", root))
    assert not first.served and first.steps[0].reason == "no entry for this key"
    stored = await cache.cache_store(
        CacheStoreInput(
            run_id="run-a",
            wave=wave_for("run-a", prefix),
            wave_key="001|serial|:work:-",
            job_id="7",
            gpu_hours=2.0,
            cache_root=root,
            scope="t",
            keys=first.keys,
            created_at="2026-12-02T00:00:00Z",
        )
    )
    assert stored.steps[0].stored

    second = await cache.cache_lookup(lookup(wave_for("run-b", prefix), "run-b", root))
    assert second.served and second.steps[0].source_run == "run-a" and second.steps[0].gpu_hours_saved == 2.0
    assert await storage.read_text(f"{prefix}/run-b/model/weights.bin") == "weights"

    await storage.write_text(f"{prefix}/data/shard-0", "other tokens")
    third = await cache.cache_lookup(lookup(wave_for("run-c", prefix), "run-c", root))
    assert not third.served and third.keys[0].key != first.keys[0].key
    assert await storage.facts(f"{prefix}/run-c/model/weights.bin") is None


async def test_a_503_on_every_attempt_of_the_store_check_is_retried_not_recorded_and_stores_once_s3_answers(
    s3_server: S3Server, tmp_path: Path
) -> None:
    prefix = f"s3://{BUCKET}/cache-{uuid.uuid4().hex[:6]}"
    root = f"{prefix}/.npaflow-cache"
    async with S3Outage(s3_server.address) as outage:
        storage = S3Storage(outage.endpoint)
        context = ActivityContext(
            home=tmp_path, backends={}, worker_id="w", task_queue="q", storage=StorageRouter(storage)
        )
        cache = CacheActivities(context)
        await storage.write_text(f"{prefix}/data/shard-0", "tokens")
        await storage.write_text(f"{prefix}/run-a/model/weights.bin", "weights")
        found = await cache.cache_lookup(lookup(wave_for("run-a", prefix), "run-a", root))
        store = CacheStoreInput(
            run_id="run-a",
            wave=wave_for("run-a", prefix),
            wave_key="001|serial|:work:-",
            job_id="7",
            gpu_hours=1.0,
            cache_root=root,
            scope="t",
            keys=found.keys,
            created_at="2026-12-02T00:00:00Z",
        )
        outage.failing = True
        with pytest.raises(ApplicationError) as raised:  # the activity fails: Temporal retries it
            await cache.cache_store(store)
        assert raised.value.type == "TransportError" and not raised.value.non_retryable
        assert outage.refused > 0
        outage.failing = False
        stored = await cache.cache_store(store)
    assert stored.steps[0].stored and not stored.steps[0].reason
    hit = await CacheActivities(
        ActivityContext(
            home=tmp_path,
            backends={},
            worker_id="w",
            task_queue="q",
            storage=StorageRouter(S3Storage(s3_server.endpoint)),
        )
    ).cache_lookup(lookup(wave_for("run-b", prefix), "run-b", root))
    assert hit.served

"""A run granted a key's flight at once still looks again: the holder may have stored just before.

The lookup reads the cache, misses, then asks for the flight. Between the two,
the run that held the key can store its entry and give the key back, so the ask
is granted at once; launching then would run the same stage twice (seen in CI:
five identical runs started together launched `tokenize` twice).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import activities.cache as cache_activities
from activities.cache import CacheActivities
from activities.context import ActivityContext
from activities.storage import StorageRouter
from npaflow.runtime.cache.messages import (
    CacheLookupInput,
    CacheMode,
    CacheStoreInput,
    FlightAnswer,
    RequestFlightInput,
)
from npaflow.traversal.models import Wave
from tests.helpers import CATALOG
from tests.integration.test_stage_cache_s3 import cached_wave

pytestmark = pytest.mark.integration


def wave_for(run_id: str, root: Path) -> Wave:
    return cached_wave(run_id, f"file://{root}/data.txt", f"file://{root}/{{{{run.id}}}}/model.txt")


def lookup(run_id: str, root: Path) -> CacheLookupInput:
    return CacheLookupInput(
        run_id=run_id,
        wave=wave_for(run_id, root),
        catalog=CATALOG,
        cache_root=f"file://{root}/.cache",
        scope="t",
        mode=CacheMode.ON,
        flight_queue="q",
    )


async def test_a_flight_granted_at_once_after_the_holder_stored_serves_the_entry_and_gives_the_key_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CacheActivities(
        ActivityContext(home=tmp_path, backends={}, worker_id="w", task_queue="q", storage=StorageRouter())
    )
    (tmp_path / "data.txt").write_text("tokens")
    (tmp_path / "run-a").mkdir()
    (tmp_path / "run-a" / "model.txt").write_text("weights")
    keys = (await cache.cache_lookup(lookup("run-a", tmp_path).model_copy(update={"flight_queue": ""}))).keys
    released: list[tuple[str, list[str]]] = []

    async def holder_stores_then_grants(request: RequestFlightInput) -> FlightAnswer:
        await cache.cache_store(
            CacheStoreInput(
                run_id="run-a",
                wave=wave_for("run-a", tmp_path),
                wave_key="001|serial|:work:-",
                job_id="1",
                gpu_hours=1.0,
                cache_root=f"file://{tmp_path}/.cache",
                scope="t",
                keys=keys,
                created_at="2026-12-03T00:00:00Z",
            )
        )
        return FlightAnswer(holding=True)  # run-a gave the key back before run-b's ask arrived

    async def record_release(run_id: str, scope: str, flights: list[str]) -> None:
        released.append((run_id, flights))

    monkeypatch.setattr(cache_activities, "request_flight", holder_stores_then_grants)
    monkeypatch.setattr(cache_activities, "release_flights", record_release)
    found = await cache.cache_lookup(lookup("run-b", tmp_path))
    assert found.served and found.steps[0].source_run == "run-a"
    assert (tmp_path / "run-b" / "model.txt").read_text() == "weights"
    assert released == [("run-b", [keys[0].key])]
    assert not found.flying

"""An ended long run's earlier wave attempts are read from its ledger in the status query's pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.artifacts import RunArtifactActivities
from activities.context import ActivityContext
from activities.storage import StorageRouter
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.ledger_layout import RUNTIME_FILE, ledger_file_uri
from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING
from npaflow.runtime.reads import RunWaves, RunWavesInput
from npaflow.runtime.status_pages import status_view
from tests.unit.test_status_pages import run_with

pytestmark = pytest.mark.integration


async def ledger_of(tmp_path: Path, waves: int, members: int = 1) -> tuple[RunArtifactActivities, str]:
    state = run_with(waves, members)
    ledger = RuntimeLedger(workflow="w", run_id="run-1", api_version="v", waves=state.waves.records())
    prefix = f"file://{tmp_path}/runs/run-1"
    path = Path(ledger_file_uri(prefix, RUNTIME_FILE).removeprefix("file://"))
    path.parent.mkdir(parents=True)
    path.write_text(ledger.model_dump_json())
    return RunArtifactActivities(ActivityContext(home=tmp_path, storage=StorageRouter(), backends={})), prefix


async def pages_before(reader: RunArtifactActivities, prefix: str, before: int) -> list[RunWaves]:
    pages = [await reader.read_run_waves(RunWavesInput(ledger_uri=prefix, before=before))]
    while pages[-1].start > 0:
        pages.append(await reader.read_run_waves(RunWavesInput(ledger_uri=prefix, before=pages[-1].start)))
    return pages


async def test_the_ledger_pages_of_a_2000_wave_run_make_up_every_attempt_in_order(tmp_path: Path) -> None:
    reader, prefix = await ledger_of(tmp_path, 2000)
    pages = await pages_before(reader, prefix, -1)
    assert len(pages) > 1
    assert all(len(page.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING for page in pages)
    waves = [wave.job_id for page in reversed(pages) for wave in page.waves]
    assert waves == [f"j{index}" for index in range(2000)]


async def test_a_ledger_page_is_the_status_querys_page_of_the_same_attempts(tmp_path: Path) -> None:
    reader, prefix = await ledger_of(tmp_path, 100, members=50)
    queried = status_view(run_with(100, members=50), before=60)
    read = await reader.read_run_waves(RunWavesInput(ledger_uri=prefix, before=60))
    assert (read.waves, read.start) == (queried.waves, queried.waves_start)


async def test_without_a_page_the_read_lists_every_launched_attempt_as_logs_needs(tmp_path: Path) -> None:
    reader, prefix = await ledger_of(tmp_path, 300)
    read = await reader.read_run_waves(RunWavesInput(ledger_uri=prefix))
    assert len(read.waves) == 300 and read.start == 0


async def test_an_output_the_cache_served_is_listed_with_the_run_and_job_it_came_from(tmp_path: Path) -> None:
    from npaflow.cli.artifacts_handler import artifacts_text
    from npaflow.document.models import Artifact
    from npaflow.runtime.ledger import CachedStep, WaveAttemptRecord
    from npaflow.runtime.ledger.records import PlannedStep
    from npaflow.runtime.reads import ListArtifactsInput
    from npaflow.waves import WaveKey

    out = tmp_path / "out.txt"
    out.write_text("data")
    hit = CachedStep(state="prep", key="k", hit=True, source_run="c1", source_job="7")
    planned = PlannedStep(state="prep", outputs=[Artifact(uri=f"file://{out}")])
    wave = WaveAttemptRecord(
        key=WaveKey.parse("001|serial|:prep:-"), states=["prep"], cache=[hit], planned=[planned]
    )
    ledger = RuntimeLedger(workflow="w", run_id="c2", api_version="v", waves=[wave])
    prefix = f"file://{tmp_path}/runs/c2"
    path = Path(ledger_file_uri(prefix, RUNTIME_FILE).removeprefix("file://"))
    path.parent.mkdir(parents=True)
    path.write_text(ledger.model_dump_json())
    reader = RunArtifactActivities(ActivityContext(home=tmp_path, storage=StorageRouter(), backends={}))
    text = artifacts_text(await reader.list_artifacts(ListArtifactsInput(ledger_uri=prefix)))
    assert f"present file://{out}  from the cache: run c1 job 7 (wave 001, attempt 1)" in text

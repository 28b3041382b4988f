"""A run waiting for another run's cache entry says whom it waits for, wherever people look.

Two runs that miss the same key launch it once: the second waits until the first
stored its entry (then it is served from it). Seen before: the waiting run's
`status` said only `current: prep`, and `list` showed it running with no state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.harness import Harness
from tests.helpers import COLD_WORKER_SECONDS, eventually
from tests.integration.test_gpu_quotas import npaflow_cli
from tests.integration.test_stage_cache import STAGES, cache_of, chain_spec, launches

pytestmark = pytest.mark.integration


async def test_a_run_waiting_for_another_runs_cache_entry_names_that_run_in_status_and_list(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    release = tmp_path / "release-prep"
    held = f"while [ ! -e {release} ]; do sleep 0.1; done && cat {tmp_path}/seed.txt > "
    spec = chain_spec(tmp_path, commands={"prep": held + f"{tmp_path}/{{{{run.id}}}}/prep/out.txt"})
    async with local_harness.worker():
        holder = await local_harness.start(spec, run_id="cache-holder")
        await eventually(
            lambda: next(iter((local_harness.home / "local" / "jobs").glob("*/supervisor.json")), None),
            timeout=COLD_WORKER_SECONDS,
            what="the holder's prep job running",
        )
        waiter = await local_harness.start(spec, run_id="cache-waiter")

        async def waiting() -> str | None:
            text = await npaflow_cli(env, "status", waiter.id)
            return text if "waiting:" in text else None

        status = await eventually(waiting, timeout=30, what="the waiter saying what it waits for")
        listed = json.loads(await npaflow_cli(env, "list", "--json"))
        release.touch()
        held_outcome = await local_harness.finish(holder)
        outcome = await local_harness.finish(waiter)
        after = await npaflow_cli(env, "status", waiter.id)
    assert "waiting: prep waits for run cache-holder, which is making the same cache entry (key " in status
    (row,) = [r for r in listed if r["run_id"] == waiter.id]
    assert row["phase"] == "waiting" and row["waiting_for"] == "run cache-holder's cache entry (prep)"
    assert row["current_states"] == ["prep"]
    assert held_outcome.status == outcome.status == "succeeded"
    assert cache_of(outcome, "prep")["hit"] and cache_of(outcome, "prep")["source_run"] == "cache-holder"
    assert "waiting:" not in after
    assert sorted(launches(tmp_path)) == sorted(STAGES)  # each stage launched once, by the holder

"""GPU quota pools (issue 31): waves acquire GPUs from a pool in Temporal before they launch."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from npaflow.cli.quota_handler import pool_status, set_pool
from npaflow.quota import PoolConfig, PoolStatus, QuotaClaim
from tests.harness import Harness

pytestmark = pytest.mark.integration


def gpu_spec(tmp_path: Path, name: str, *, seconds: float = 1.0, gpus: int = 8, states: int = 1) -> str:
    """A chain of `states` states, each one 8-GPU task that sleeps."""
    names = [f"s{i}" for i in range(states)]
    doc = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": name},
        "resources": {"gpu": {"accelerators": f"H100:{gpus}"}},
        "initial": names[0],
        "states": {
            state: {
                "run": {"shell": f"sleep {seconds}"},
                "resources": "gpu",
                **({"next": names[i + 1]} if i + 1 < len(names) else {"terminal": True}),
            }
            for i, state in enumerate(names)
        },
    }
    return json.dumps(doc)


async def new_pool(client: Client, harness: Harness, gpus: int, **weights: float) -> str:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    await set_pool(client, pool, PoolConfig(gpus=gpus, weights=weights), harness.task_queue)
    return pool


async def sample_in_use(client: Client, pool: str, seen: list[PoolStatus], stop: asyncio.Event) -> None:
    while not stop.is_set():
        seen.append(await pool_status(client, pool))
        await asyncio.sleep(0.2)


async def test_waves_over_a_pool_never_hold_more_gpus_than_it_has_and_every_run_succeeds(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    seen: list[PoolStatus] = []
    stop = asyncio.Event()
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 16)
        sampler = asyncio.ensure_future(sample_in_use(env.client, pool, seen, stop))
        handles = [
            await local_harness.start(
                gpu_spec(tmp_path, "q"), run_id=f"q-{i}", quota=QuotaClaim(pool=pool, team=f"t{i % 3}")
            )
            for i in range(6)
        ]
        outcomes = [await local_harness.finish(handle) for handle in handles]
        stop.set()
        await sampler
        final = await pool_status(env.client, pool)
    assert [o.status for o in outcomes] == ["succeeded"] * 6, [o.error for o in outcomes]
    assert max(status.in_use for status in seen) == 16
    assert any(status.waiting for status in seen)  # some waves waited their turn
    assert final.in_use == 0 and not final.waiting


async def test_a_wave_bigger_than_the_pool_fails_with_the_arithmetic_and_launches_nothing(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 4)
        outcome = await local_harness.finish(
            await local_harness.start(gpu_spec(tmp_path, "big"), run_id="q-big", quota=QuotaClaim(pool=pool))
        )
    assert outcome.status == "failed"
    assert (
        f"quota pool {pool} refused wave" in outcome.error
        and "needs 8 GPUs and the pool holds 4" in outcome.error
    )


async def test_a_run_whose_pool_does_not_exist_does_not_launch_and_says_how_to_create_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        outcome = await local_harness.finish(
            await local_harness.start(
                gpu_spec(tmp_path, "nopool"), run_id="q-nopool", quota=QuotaClaim(pool="nope")
            )
        )
    assert outcome.status == "failed"
    assert "quota pool nope cannot be reached" in outcome.error and "npaflow quota set nope" in outcome.error

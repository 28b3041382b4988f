"""How long a dev server takes to hand out a task: Temporal's default shard read rate vs npaflow's flags.

A plain SDK workflow (no npaflow code) runs `--iterations` activities one after
another on a fresh dev server, once with Temporal's defaults and once with
`DEV_SERVER_FLAGS`; it prints the time per activity round trip and the median gap
between a task being scheduled and a worker starting it, before and after the
first 100 events (the default rate spends its burst on those).

    python bench/dispatch_bench.py [--iterations 150]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from npaflow.temporal.dev_server import DEV_SERVER_FLAGS

_STARTED = {EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED}


@activity.defn
async def noop(index: int) -> int:
    """Nothing: the round trip is the server's and the SDK's."""
    return index


@workflow.defn
class Loop:
    """`count` activities one after another, on another queue (never dispatched eagerly)."""

    @workflow.run
    async def run(self, count: int) -> int:
        """Each activity waits for the one before."""
        for index in range(count):
            await workflow.execute_activity(
                noop, index, start_to_close_timeout=timedelta(seconds=10), task_queue="activities"
            )
        return count


async def measure(flags: list[str], iterations: int) -> tuple[float, float, float]:
    """Per round trip (ms), and the median dispatch gap (ms) within and past the first 100 events."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        dev_server_log_level="error",
        ui=False,
        dev_server_extra_args=flags,
    )
    async with env:
        client = env.client
        workers = Worker(client, task_queue="loop", workflows=[Loop])
        async with workers, Worker(client, task_queue="activities", activities=[noop]):
            began = time.perf_counter()
            handle = await client.start_workflow(
                Loop.run, iterations, id=str(uuid.uuid4()), task_queue="loop"
            )
            await handle.result()
            per_trip = (time.perf_counter() - began) / iterations * 1000
            events = [event async for event in handle.fetch_history_events()]
    early: list[float] = []
    late: list[float] = []
    for before, event in itertools.pairwise(events):
        if event.event_type in _STARTED:
            gap = (event.event_time.ToMicroseconds() - before.event_time.ToMicroseconds()) / 1000
            (early if event.event_id < 100 else late).append(gap)
    return per_trip, statistics.median(early), statistics.median(late)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=150)
    options = parser.parse_args()
    results = {}
    for name, flags in (("Temporal's defaults", []), ("npaflow's flags", list(DEV_SERVER_FLAGS))):
        results[name] = await measure(flags, options.iterations)
        trip, early, late = results[name]
        print(
            f"{name}: {trip:.1f} ms per activity round trip; scheduled -> started median "
            f"{early:.1f} ms in the first 100 events, {late:.1f} ms after"
        )
    default, ours = results.values()
    print(f"round trip: {ours[0] / default[0]:.2f}x with npaflow's flags")


if __name__ == "__main__":
    asyncio.run(main())

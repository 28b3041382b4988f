"""Queue calls per poll tick, and what one tick costs on a real SkyPilot API server.

Part 1: N concurrent waves await their jobs through one worker's shared poller
(the real `JobPoller`) over a backend that takes `--latency` seconds per queue
call; prints queue calls per tick (budget 1) against one call per wave per tick.

Part 1b: the same N waves each end at a random moment, awaited at the SkyPilot
backend's default tick over a `--latency` queue call; prints job end -> the
await seeing it (median and p95; budget: median <= 10 s at 20 waves) and the
queue calls per tick it took.

Part 2 (`--live`): starts a SkyPilot API server of the pinned release (consolidation mode,
needs rsync), seeds its job table with finished jobs through SkyPilot's own job
state API (10, 1,000, then 10,000 by default: `--tables`), and times one tick's
call (`queue_v2(job_ids=..., fields=QUEUE_FIELDS)`, as the poller makes it) asking
for 10 and for 200 ids, printing the records and bytes of each answer.

Part 3 (`--fake`): the same through the real SkyPilot backend and poller over the fake
API server of the tests (tests/integration/fake_skypilot.py, SkyPilot's own
`ManagedJobRecord`s), its table filled to 10, 1,000 and 10,000 jobs (`--fake-tables`):
one tick's call time and answer bytes asking 10 and 200 ids, then 200 waves awaiting
jobs that end at random: queue calls per tick and job end -> await sees it.

Run: python bench/queue_bench.py [--waves 50] [--seconds 12] [--live] [--fake]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.poller import JobPoller  # noqa: E402
from npaflow.runtime.ledger import TaskRow  # noqa: E402
from npaflow.runtime.request import BackendName  # noqa: E402
from npaflow.runtime.status import JobStatus  # noqa: E402

if TYPE_CHECKING:
    from activities.backends.skypilot import SkyPilotBackend
    from activities.backends.skypilot_sdk import SkyPilotSdk
    from tests.integration.fake_skypilot import FakeSkyPilotApi
    from tests.skypilot_server import SkyApiServer

SEED = """
import sys
from sky.jobs import state
from sky.jobs.state import ManagedJobStatus
state.create_table  # noqa: B018 - importing initialises the job tables on first use
for index in range(int(sys.argv[1])):
    job_id = state.set_job_info_without_job_id(
        f"history-{index}", "default", "bench", None, None, None, execution="serial")
    state.set_pending(job_id, 0, f"history-{index}", "1x[CPU:1+]", "{}")
    state.set_failed(job_id, None, ManagedJobStatus.FAILED_PRECHECKS, "seeded by queue_bench")
    state.scheduler_set_done(job_id, idempotent=True)
"""


class CountingBackend:
    """A backend whose queue call takes `latency` seconds and counts the ids it was asked for.

    A job listed in `ends` is SUCCEEDED in answers to calls that start after its end.
    """

    name = BackendName.SKYPILOT
    host_bound = False
    poll_interval = 1.0

    def __init__(self, latency: float, ends: dict[str, float] | None = None) -> None:
        self.latency = latency
        self.ends = ends or {}
        self.calls: list[int] = []

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        self.calls.append(len(job_ids))
        asked_at = time.monotonic()
        await asyncio.sleep(self.latency)
        return {job_id: [TaskRow(job_id=job_id, status=self._status(job_id, asked_at))] for job_id in job_ids}

    def _status(self, job_id: str, asked_at: float) -> JobStatus:
        end = self.ends.get(job_id)
        return JobStatus.SUCCEEDED if end is not None and asked_at >= end else JobStatus.RUNNING


async def shared_poller(waves: int, seconds: float, poll: float, latency: float) -> None:
    backend = CountingBackend(latency)
    poller = JobPoller(backend)  # type: ignore[arg-type]
    served = 0

    async def wave(index: int) -> None:
        nonlocal served
        await asyncio.sleep(index * poll / waves)  # waves start at different moments
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await poller.observe(str(index), poll)
            served += 1

    started = time.monotonic()
    await asyncio.gather(*(wave(i) for i in range(waves)))
    elapsed = time.monotonic() - started
    ticks = elapsed / poll
    per_wave_calls = waves * ticks
    print(f"{waves} concurrent waves, poll every {poll:g}s, queue call {latency:g}s, {elapsed:.1f}s:")
    print(
        f"  queue calls: {len(backend.calls)} ({len(backend.calls) / ticks:.2f} per tick, budget 1); "
        f"polls served: {served}; ids per call: max {max(backend.calls)}"
    )
    print(
        f"  one call per wave per tick would be {per_wave_calls:.0f} calls ({waves} per tick): "
        f"ratio {len(backend.calls) / per_wave_calls:.3f}"
    )


async def barrier_latency(waves: int, latency: float) -> None:
    """Job end -> the await that sees it, at the SkyPilot backend's default tick."""
    from activities.backends.skypilot import SKYPILOT_POLL_SECONDS

    rng = random.Random(15)
    started = time.monotonic()
    ends = {str(i): started + rng.uniform(1.0, 6 * SKYPILOT_POLL_SECONDS) for i in range(waves)}
    backend = CountingBackend(latency, ends)
    backend.poll_interval = SKYPILOT_POLL_SECONDS
    poller = JobPoller(backend)  # type: ignore[arg-type]
    seen: list[float] = []

    async def wave(job_id: str) -> None:
        await asyncio.sleep(rng.uniform(0, SKYPILOT_POLL_SECONDS))  # launched at different moments
        while True:
            rows = await poller.observe(job_id, SKYPILOT_POLL_SECONDS)
            if rows[0].status.is_terminal():
                seen.append(time.monotonic() - ends[job_id])
                return

    await asyncio.gather(*(wave(job_id) for job_id in ends))
    ticks = (time.monotonic() - started) / SKYPILOT_POLL_SECONDS
    p95 = sorted(seen)[int(0.95 * (len(seen) - 1))]
    print(
        f"{waves} waves ending at random over {6 * SKYPILOT_POLL_SECONDS:g}s, default tick "
        f"{SKYPILOT_POLL_SECONDS:g}s, queue call {latency:g}s: job end -> await sees it median "
        f"{statistics.median(seen):.2f}s, p95 {p95:.2f}s (budget: median <= 10s); "
        f"{len(backend.calls) / ticks:.2f} queue calls per tick"
    )


def seed_history(server: SkyApiServer, jobs: int) -> float:
    """Add `jobs` finished records through SkyPilot's own job state API; seconds it took."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", SEED, str(jobs)],
        env=server.environ(),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


async def one_tick(sdk: SkyPilotSdk, ids: list[int]) -> tuple[float, int, int]:
    """Median seconds of the tick's `queue_v2(job_ids=..., fields=QUEUE_FIELDS)` call, its records, bytes."""
    from activities.backends.skypilot import QUEUE_FIELDS

    await sdk.queue(job_ids=ids, limit=None, fields=QUEUE_FIELDS)  # warm-up
    samples, records = [], []
    for _ in range(5):
        started = time.perf_counter()
        records = await sdk.queue(job_ids=ids, limit=None, fields=QUEUE_FIELDS)
        samples.append(time.perf_counter() - started)
    size = len(json.dumps([record.model_dump(mode="json") for record in records]))
    return statistics.median(samples), len(records), size


async def live_tick_latency(histories: list[int]) -> None:
    """One tick's call and answer on a real server whose job table holds each of `histories` records."""
    from activities.backends.skypilot_sdk import SkyPilotSdk
    from tests.skypilot_server import SkyApiServer, host_turn

    with tempfile.TemporaryDirectory() as scratch, host_turn():
        server = SkyApiServer(Path(scratch))
        server.start()
        try:
            sdk, seeded, figures = SkyPilotSdk(server.endpoint), 0, {}
            for history in histories:
                took = seed_history(server, history - seeded)
                print(f"seeded {history - seeded} finished jobs in {took:.0f}s (table: {history})")
                seeded = history
                for asked in (10, 200):
                    ids = list(range(1, min(asked, history) + 1))
                    seconds, count, size = await one_tick(sdk, ids)
                    figures[history, asked] = seconds
                    print(
                        f"  table {history:>6}: one tick asking {len(ids):>3} ids: median {seconds:.2f}s, "
                        f"{count} records, {size / 1024:.1f} KiB"
                    )
            large = max(histories)
            for asked in (10, 200):
                small = min(h for h in histories if h >= asked)  # a table that holds every id asked
                print(
                    f"{asked} ids asked, table {large:,} vs {small:,}: time ratio "
                    f"{figures[large, asked] / figures[small, asked]:.2f} "
                    "(flat: the tick does not grow with the table)"
                )
        finally:
            server.stop()


def fake_api(table: int, running: int) -> tuple[FakeSkyPilotApi, list[int]]:
    """The fake holding `table` finished jobs and, newest, `running` running ones (their ids)."""
    from sky.jobs.state import ManagedJobStatus as JobState

    from tests.integration.fake_skypilot import FakeJob, FakeSkyPilotApi

    api, done, live = FakeSkyPilotApi(), [JobState.SUCCEEDED], [JobState.RUNNING]
    for job_id in range(1, table + running + 1):
        job = FakeJob(job_id, f"wave-{job_id}", "serial", ["train"], {}, [done if job_id <= table else live])
        job.statuses, job.start_at, job.end_at = [JobState.PENDING], [None], [None]
        job.set_statuses(job.script[0])
        api.jobs[job_id] = job
    return api, list(range(table + 1, table + running + 1))


async def fake_tick(backend: SkyPilotBackend, api: FakeSkyPilotApi, ids: list[int]) -> tuple[float, int]:
    """Median seconds of one tick's call through the backend, and the answer's JSON bytes."""
    from activities.backends.skypilot import QUEUE_FIELDS

    samples = []
    for _ in range(7):
        started = time.perf_counter()
        await backend.queue([str(i) for i in ids])
        samples.append(time.perf_counter() - started)
    records = await api.queue(job_ids=ids, limit=None, fields=QUEUE_FIELDS)
    return statistics.median(samples), len(json.dumps([r.model_dump(mode="json") for r in records]))


async def fake_awaits(backend: SkyPilotBackend, api: FakeSkyPilotApi, ids: list[int], tick: float) -> None:
    """`ids` awaited through one poller while they end at random: calls per tick, end -> seen."""
    from sky.jobs.state import ManagedJobStatus as JobState

    rng, poller, seen = random.Random(36), JobPoller(backend), []
    started = time.monotonic()
    ends = {job_id: started + rng.uniform(0.5, 10 * tick) for job_id in ids}

    async def end(job_id: int) -> None:
        await asyncio.sleep(ends[job_id] - time.monotonic())
        api.jobs[job_id].script = [[JobState.SUCCEEDED]]
        api.jobs[job_id].set_statuses([JobState.SUCCEEDED])

    async def wave(job_id: int) -> None:
        while not (await poller.observe(str(job_id), tick))[0].status.is_terminal():
            pass
        seen.append(time.monotonic() - ends[job_id])

    calls = len(api.queue_calls)
    await asyncio.gather(*(end(i) for i in ids), *(wave(i) for i in ids))
    ticks = math.floor(time.monotonic() / tick) - math.floor(started / tick)  # grid points passed
    print(
        f"  {len(ids)} waves awaiting, {tick:g}s tick: {(len(api.queue_calls) - calls) / ticks:.2f} queue "
        f"calls per tick (ids per call up to {max(len(c or []) for c in api.queue_calls)}); job end -> "
        f"await sees it median {statistics.median(seen):.2f}s, max {max(seen):.2f}s (one tick: {tick:g}s)"
    )


async def fake_table_ticks(tables: list[int], waves: int = 200, tick: float = 1.0) -> None:
    """Part 3: the tick's cost against the fake's table size, and 200 awaits over the largest."""
    from activities.backends.skypilot import SkyPilotBackend

    figures: dict[tuple[int, int], float] = {}
    for table in tables:
        api, running = fake_api(table, waves)
        backend = SkyPilotBackend(api, poll_interval=tick)
        for asked in (10, 200):
            seconds, size = await fake_tick(backend, api, running[:asked])
            figures[table, asked] = seconds
            print(
                f"fake table {table:>6} (+{waves} running): one tick asking {asked:>3} ids: median "
                f"{seconds * 1000:.2f} ms, {size / 1024:.1f} KiB"
            )
        if table == max(tables):
            await fake_awaits(backend, api, running, tick)
    for asked in (10, 200):
        print(
            f"{asked} ids asked, fake table {max(tables):,} vs {min(tables):,}: time ratio "
            f"{figures[max(tables), asked] / figures[min(tables), asked]:.2f}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waves", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--poll-seconds", type=float, default=1.0)
    parser.add_argument(
        "--latency", type=float, default=0.5, help="seconds one queue call takes (the SDK measured 2-3 s)"
    )
    parser.add_argument("--live", action="store_true", help="also time ticks on a real API server")
    parser.add_argument(
        "--tables", default="10,1000,10000", help="job-table sizes the live server is seeded to, in order"
    )
    parser.add_argument("--fake", action="store_true", help="also time ticks on the tests' fake API server")
    parser.add_argument("--fake-tables", default="10,1000,10000", help="job-table sizes of the fake")
    args = parser.parse_args()
    if args.fake:
        await fake_table_ticks([int(size) for size in args.fake_tables.split(",")])
    await shared_poller(args.waves, args.seconds, args.poll_seconds, args.latency)
    await barrier_latency(20, args.latency)
    await barrier_latency(20, 2.5)  # what one queue_v2 call took on the cloud-less API server
    if args.live:
        await live_tick_latency([int(size) for size in args.tables.split(",")])


if __name__ == "__main__":
    asyncio.run(main())

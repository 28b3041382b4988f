"""Queue calls per poll tick, and what one tick costs on a real SkyPilot API server.

Part 1: N concurrent waves await their jobs through one worker's shared poller
(the real `JobPoller`) over a backend that takes `--latency` seconds per queue
call; prints queue calls per tick (budget 1) against one call per wave per tick.

Part 1b: the same N waves each end at a random moment, awaited at the SkyPilot
backend's default tick over a `--latency` queue call; prints job end -> the
await seeing it (median and p95; budget: median <= 10 s at 20 waves) and the
queue calls per tick it took.

Part 2 (`--live`): starts a SkyPilot API server of the pinned release (consolidation mode,
needs rsync), seeds its history with finished jobs through SkyPilot's own job
state API, and times one tick (`queue_v2(job_ids=...)` through the backend)
with 10 and with 1,000 finished jobs in the history.

Run: python bench/queue_bench.py [--waves 50] [--seconds 12] [--live]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.poller import JobPoller  # noqa: E402
from npaflow.runtime.ledger import TaskRow  # noqa: E402
from npaflow.runtime.request import BackendName  # noqa: E402
from npaflow.runtime.status import JobStatus  # noqa: E402

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


async def live_tick_latency() -> None:
    from activities.backends.skypilot import SkyPilotBackend
    from activities.backends.skypilot_sdk import SkyPilotSdk
    from tests.skypilot_server import SkyApiServer, host_turn

    with tempfile.TemporaryDirectory() as scratch, host_turn():
        server = SkyApiServer(Path(scratch))
        server.start()
        try:
            backend = SkyPilotBackend(SkyPilotSdk(server.endpoint))
            figures = {}
            for history in (10, 1000):
                seed = history - ((figures and 10) or 0)
                subprocess.run(
                    [sys.executable, "-c", SEED, str(seed)],
                    env=server.environ(),
                    check=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                ids = [str(i) for i in range(1, 11)]
                await backend.queue(ids)  # warm-up
                samples = []
                for _ in range(5):
                    started = time.perf_counter()
                    await backend.queue(ids)
                    samples.append(time.perf_counter() - started)
                figures[history] = statistics.median(samples)
                print(
                    f"one tick (queue_v2 of 10 ids), {history} finished jobs in history: "
                    f"median {figures[history]:.2f}s (min {min(samples):.2f}s)"
                )
            print(
                f"  1,000 vs 10 jobs of history: ratio {figures[1000] / figures[10]:.2f} "
                "(flat means the tick does not grow with history)"
            )
        finally:
            server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waves", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--poll-seconds", type=float, default=1.0)
    parser.add_argument(
        "--latency", type=float, default=0.5, help="seconds one queue call takes (the SDK measured 2-3 s)"
    )
    parser.add_argument("--live", action="store_true", help="also time ticks on a real API server")
    args = parser.parse_args()
    await shared_poller(args.waves, args.seconds, args.poll_seconds, args.latency)
    await barrier_latency(20, args.latency)
    await barrier_latency(20, 2.5)  # what one queue_v2 call took on the cloud-less API server
    if args.live:
        await live_tick_latency()


if __name__ == "__main__":
    asyncio.run(main())

"""One process-wide poller per backend: every await of a worker shares one queue call per tick.

Each `observe(job_id, delay)` registers a waiter due at the next tick of its
interval: ticks of an interval fall on one clock grid (multiples of `delay`), so
every waiter of one interval is due at the same moment however long the last
call took or when its wave started. The poller wakes at the earliest due time,
takes the waiters that are due (or nearly due) at that moment as the tick's
batch, makes ONE `backend.queue(ids of the batch)` call, and hands each waiter
of the batch its job's rows, or the call's error. A job is asked about once per
interval; a call slower than half the interval no longer splits the waiters
into groups that each pay a call.

A poll answers only what it asked (DESIGN §3.16): a waiter that registers while
a call is in flight is never served that call's answer (it has no rows for its
job); it waits for the next tick. So "no rows" always means the backend was
asked about the job and did not list it.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field

import structlog

from activities.backends.base import Backend
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.metrics import Metric, record

log = structlog.get_logger(__name__)

#: A waiter due within this share of its own interval joins the current tick (grids of
#: different intervals that nearly coincide share a call).
COALESCE_FRACTION = 0.1


def next_tick(now: float, interval: float) -> float:
    """The first point of the interval's clock grid after `now` (now itself when no interval)."""
    if interval <= 0:
        return now
    return (math.floor(now / interval) + 1) * interval


@dataclass
class _Waiter:
    job_id: str
    delay: float
    due: float
    future: asyncio.Future[list[TaskRow]]

    def joins_tick_at(self, now: float) -> bool:
        """Due now, or early by at most a tenth of its own interval."""
        return self.due <= now + COALESCE_FRACTION * self.delay


@dataclass
class PollerStats:
    """What the poller did: for benchmarks and logs."""

    calls: int = 0
    served: int = 0
    max_ids_per_call: int = 0
    worst_latency: float = 0.0
    latencies: list[float] = field(default_factory=list)


class JobPoller:
    """Coalesces status queries of one backend across all awaits in this process."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.stats = PollerStats()
        self._waiters: list[_Waiter] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def observe(self, job_id: str, delay: float) -> list[TaskRow]:
        """The job's rows from the next tick of a `delay`-second grid that asks for it.

        The tick comes at most `delay` seconds from now (sooner when the grid's
        next point is nearer) and its call starts after this call: never an
        answer to a call already in flight.

        Raises:
            Exception: whatever the shared queue call raised on that tick.
        """
        delay = max(0.0, delay)
        due = next_tick(time.monotonic(), delay)
        waiter = _Waiter(job_id, delay, due, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        self._ensure_running()
        self._wake.set()
        try:
            return await waiter.future
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self._waiters:
            self._wake.clear()
            wait = min(w.due for w in self._waiters) - time.monotonic()
            if wait > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                    continue  # a new waiter may be due sooner: recompute
                except TimeoutError:
                    pass
            await self._tick()

    async def _tick(self) -> None:
        """One call for the waiters due now; waiters arriving during the call wait for the next."""
        now = time.monotonic()
        batch = [w for w in self._waiters if w.joins_tick_at(now)]
        for waiter in batch:
            self._waiters.remove(waiter)
        ids = sorted({w.job_id for w in batch})
        try:
            rows = await self.backend.queue(ids)
            error: BaseException | None = None
        except Exception as exc:  # noqa: BLE001 - handed to every waiter, which decides
            rows, error = {}, exc
        self._record(len(ids), time.monotonic() - now)
        for waiter in batch:
            if waiter.future.done():
                continue
            if error is not None:
                waiter.future.set_exception(error)
            else:
                waiter.future.set_result(rows.get(waiter.job_id, []))
            self.stats.served += 1

    def _record(self, ids: int, latency: float) -> None:
        stats = self.stats
        stats.calls += 1
        stats.max_ids_per_call = max(stats.max_ids_per_call, ids)
        stats.worst_latency = max(stats.worst_latency, latency)
        stats.latencies = [*stats.latencies[-99:], latency]
        log.debug("poller.tick", backend=self.backend.name.value, ids=ids, latency=round(latency, 3))
        record(Metric.QUEUE_CALL_SECONDS, latency, backend=self.backend.name.value)
        record(Metric.QUEUE_CALL_IDS, ids, backend=self.backend.name.value)

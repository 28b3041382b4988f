"""The shared poller answers only what it asked (DESIGN §3.16), one queue call per tick.

A backend whose queue call is slow: waiters that register while a call is in
flight must not be served that call's answer, which has no rows for them.
"""

from __future__ import annotations

import asyncio

import pytest

from activities.poller import JobPoller
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus

pytestmark = pytest.mark.integration


class SlowQueue:
    """Answers for exactly the ids it is asked, after `latency` seconds; records every call."""

    name = BackendName.SKYPILOT
    host_bound = False
    poll_interval = 0.1

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: list[list[str]] = []

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        self.calls.append(list(job_ids))
        await asyncio.sleep(self.latency)
        return {i: [TaskRow(job_id=i, task_name=i, status=JobStatus.RUNNING)] for i in job_ids}


async def test_a_waiter_registering_during_a_slow_call_is_served_by_a_later_call_that_asks_for_it() -> None:
    backend = SlowQueue(latency=0.5)
    poller = JobPoller(backend)  # type: ignore[arg-type]
    first = asyncio.create_task(poller.observe("1", 0))
    await asyncio.sleep(0.1)  # the call for job 1 is in flight
    late = await poller.observe("2", 0)
    assert late and late[0].job_id == "2"
    assert (await first)[0].job_id == "1"
    assert backend.calls == [["1"], ["2"]]


async def test_waiters_due_together_share_one_call() -> None:
    backend = SlowQueue(latency=0.05)
    poller = JobPoller(backend)  # type: ignore[arg-type]
    results = await asyncio.gather(*(poller.observe(str(i), 0.2) for i in range(10)))
    assert all(rows for rows in results)
    assert backend.calls == [[str(i) for i in sorted(range(10), key=str)]]


async def test_many_waiters_arriving_during_calls_each_get_their_own_rows() -> None:
    backend = SlowQueue(latency=0.3)
    poller = JobPoller(backend)  # type: ignore[arg-type]

    async def waiter(index: int) -> list[TaskRow]:
        await asyncio.sleep(index * 0.07)
        return await poller.observe(str(index), 0)

    results = await asyncio.gather(*(waiter(i) for i in range(12)))
    assert [rows[0].job_id for rows in results] == [str(i) for i in range(12)]
    assert len(backend.calls) <= 12 // 3 + 2  # coalesced: far fewer calls than waiters


async def test_waves_started_apart_share_one_call_per_tick_even_when_the_call_is_slow() -> None:
    backend = SlowQueue(latency=0.3)  # more than half the interval: the old schedule split in two
    poller = JobPoller(backend)  # type: ignore[arg-type]
    interval = 0.4

    async def wave(index: int) -> None:
        await asyncio.sleep(index * 0.06)  # launched at different moments within one interval
        for _ in range(5):
            await poller.observe(str(index), interval)

    await asyncio.gather(*(wave(i) for i in range(6)))
    everyone = [str(i) for i in range(6)]
    assert backend.calls[1:4] == [everyone] * 3  # after the first tick, one call asks for all

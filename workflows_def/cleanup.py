"""Cleanup that a cancelled run still finishes: releasing GPUs, landing a cache flight, cancelling jobs.

The cleanup is awaited shielded (`finish_shielded`, or after a body with
`cleaned_up`), so the run's cancellation does not cut it short. When the worker
evicts the run from its cache, though, no new task may start (Temporal raises
`_WorkflowBeingEvictedError`); the cleanup coroutine is then closed unstarted,
since the run replays and cleans up where it continues. Nor does it start when
the worker drops the run's coroutine (closing it raises `GeneratorExit` at its
await): nothing may await there, and the event loop running at that moment may
be another run's (`cleaned_up`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

ResultT = TypeVar("ResultT")
#: A cleanup to run: releasing GPUs, landing a flight.
Cleanup = Callable[[], Coroutine[Any, Any, None]]


async def finish_shielded(cleanup: Coroutine[Any, Any, ResultT]) -> ResultT:
    """Run `cleanup` to its end even when the awaiting task is cancelled.

    Raises:
        BaseException: whatever `cleanup` raised, or what stopped its task from starting.
    """
    try:
        task = asyncio.ensure_future(cleanup)
    except BaseException:
        cleanup.close()  # never started: say so, instead of a "never awaited" warning at collection
        raise
    return await asyncio.shield(task)


async def cleaned_up(
    body: Awaitable[ResultT],
    cleanup: Cleanup,
    *,
    deferred: Callable[[BaseException, Cleanup], bool] | None = None,
) -> ResultT:
    """Await `body`, then finish `cleanup()` shielded however it ended, unless the run is dropped.

    `deferred`: offered what `body` raised and the cleanup; True when it took the cleanup
    to run later (after the run's own cleanup), so it is not run here.

    Raises:
        BaseException: what `body` raised (after the cleanup), or what the cleanup raised.
    """
    try:
        result = await body
    except GeneratorExit:
        raise  # the worker dropped the run: its replay cleans up where it continues
    except BaseException as exc:
        if deferred is None or not deferred(exc, cleanup):
            await finish_shielded(cleanup())
        raise
    await finish_shielded(cleanup())
    return result

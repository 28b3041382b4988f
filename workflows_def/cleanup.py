"""Cleanup that a cancelled run still finishes: releasing GPUs, landing a cache flight, cancelling jobs.

A `finally` awaits its cleanup shielded, so the run's cancellation does not cut
it short. When the worker evicts the run from its cache, though, no new task
may start (Temporal raises `_WorkflowBeingEvictedError`); the cleanup coroutine
is then closed unstarted, since the run replays and cleans up where it continues.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

ResultT = TypeVar("ResultT")


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

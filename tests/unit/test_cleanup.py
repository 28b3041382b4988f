"""Cleanup a run still finishes after its cancellation (workflows_def/cleanup.py)."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from workflows_def.cleanup import finish_shielded


class Evicting(BaseException):
    """Stands in for Temporal's `_WorkflowBeingEvictedError`: no task may start."""


def test_cleanup_runs_to_its_end_when_the_awaiting_task_is_cancelled() -> None:
    done: list[str] = []

    async def cleanup() -> None:
        await asyncio.sleep(0.01)
        done.append("released")

    async def scenario() -> None:
        waiter = asyncio.ensure_future(finish_shielded(cleanup()))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert done == ["released"]


def test_a_cleanup_that_cannot_start_is_closed_instead_of_left_never_awaited() -> None:
    async def cleanup() -> None:
        raise AssertionError("must not run")

    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        def refuse(*_: object, **__: object) -> asyncio.Task[object]:
            raise Evicting

        loop.set_task_factory(refuse)  # type: ignore[arg-type]
        with pytest.raises(Evicting):
            await finish_shielded(cleanup())
        loop.set_task_factory(None)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(scenario())
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]

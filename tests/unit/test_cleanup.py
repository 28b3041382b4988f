"""Cleanup a run still finishes after its cancellation (workflows_def/cleanup.py)."""

from __future__ import annotations

import asyncio
import gc
import types
import warnings
from collections.abc import Coroutine, Generator

import pytest

from workflows_def.cleanup import cleaned_up, finish_shielded


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


@types.coroutine
def suspended() -> Generator[None, None, None]:
    """One bare suspension, as a workflow's await of a command yields to its event loop."""
    yield


def test_a_body_that_ends_or_fails_is_followed_by_its_cleanup() -> None:
    done: list[str] = []

    async def cleanup() -> None:
        done.append("released")

    async def fails() -> None:
        raise ValueError("wave failed")

    async def scenario() -> None:
        assert await cleaned_up(asyncio.sleep(0, result="ok"), cleanup) == "ok"
        with pytest.raises(ValueError, match="wave failed"):
            await cleaned_up(fails(), cleanup)

    asyncio.run(scenario())
    assert done == ["released", "released"]


def test_a_run_coroutine_the_worker_drops_mid_wait_starts_no_cleanup_and_closes_quietly() -> None:
    """Closing a dropped run's coroutine: its cleanup neither runs nor awaits (on another run's loop)."""
    started: list[str] = []

    async def cleanup() -> None:
        started.append("release")

    async def another_run(run: Coroutine[object, object, None]) -> None:
        run.close()  # RuntimeError("coroutine ignored GeneratorExit") if the cleanup awaited

    run = cleaned_up(suspended(), cleanup)
    run.send(None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(another_run(run))  # dropped while another run's event loop is running
        gc.collect()
    assert started == []
    assert not [w for w in caught if "never awaited" in str(w.message)]

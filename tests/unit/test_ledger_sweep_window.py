"""The ledger sweep remembers only the runs its moving window can still list."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from temporalio.client import Client

from activities.context import ActivityContext
from worker.ledger_sweep import LedgerSweep

pytestmark = pytest.mark.unit


class Listing:
    """A visibility store whose next answer the test sets; every run in it is settled at once."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def list_workflows(self, query: str) -> AsyncIterator[Any]:
        async def rows() -> AsyncIterator[Any]:
            for run_id in self.ids:
                yield SimpleNamespace(id=run_id, run_id=f"{run_id}-exec", close_time=None)

        return rows()


async def test_a_run_the_window_no_longer_lists_is_forgotten_so_a_long_lived_worker_stays_small() -> None:
    listing = Listing()
    context = cast(ActivityContext, SimpleNamespace(task_queue="q"))
    sweep = LedgerSweep(cast(Client, listing), context)

    async def settled_at_once(execution: Any) -> int:
        return 0

    sweep._close = settled_at_once  # type: ignore[method-assign]
    listing.ids = ["r1", "r2"]
    await sweep.sweep()
    listing.ids = ["r2", "r3"]
    await sweep.sweep()
    assert sweep.settled == {("r2", "r2-exec"), ("r3", "r3-exec")}

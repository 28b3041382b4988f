"""A run closed before its first export: its ledger is written only when every launch left a receipt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowExecution, WorkflowHandle

from npaflow.runtime.contract import LAUNCH_WAVE, LOAD_SPEC
from worker.ledger_sweep import Unsettled, every_launch_receipted

pytestmark = pytest.mark.unit


def scheduled(name: str) -> HistoryEvent:
    event = HistoryEvent()
    event.activity_task_scheduled_event_attributes.activity_type.name = name
    return event


def history(*names: str) -> WorkflowHandle[Any, Any]:
    async def events() -> AsyncIterator[HistoryEvent]:
        for name in names:
            yield scheduled(name)

    return cast(WorkflowHandle[Any, Any], SimpleNamespace(fetch_history_events=events))


def closed(ago: timedelta) -> WorkflowExecution:
    return cast(WorkflowExecution, SimpleNamespace(close_time=datetime.now(UTC) - ago))


async def test_a_run_whose_history_scheduled_no_launch_launched_nothing() -> None:
    assert await every_launch_receipted(closed(timedelta(0)), history(LOAD_SPEC.name), 0)


async def test_each_scheduled_launch_with_its_receipt_is_enough() -> None:
    assert await every_launch_receipted(closed(timedelta(0)), history(LAUNCH_WAVE.name), 1)


async def test_a_launch_without_its_receipt_is_waited_for_within_its_timeout() -> None:
    with pytest.raises(Unsettled, match="1 launch"):
        await every_launch_receipted(closed(timedelta(minutes=1)), history(LAUNCH_WAVE.name), 0)


async def test_past_the_launch_timeout_a_missing_receipt_leaves_the_run_to_an_operator() -> None:
    assert not await every_launch_receipted(closed(timedelta(hours=1)), history(LAUNCH_WAVE.name), 0)

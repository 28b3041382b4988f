"""Reading a run's status pages: a replay the deadlock detector stopped is asked again, nothing else is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowQueryFailedError

from npaflow.cli import status_query
from npaflow.cli.status_query import queried_status
from npaflow.ids import RunId
from npaflow.runtime.summary import RunStatusView
from npaflow.runtime.vocabulary import RunPhase

pytestmark = pytest.mark.unit

DEADLOCK = "[TMPRL1101] Potential deadlock detected: workflow didn't yield within 2 second(s)."


class FailingFirst:
    """A handle whose first queries fail with `message`, then answer."""

    def __init__(self, failures: int, message: str) -> None:
        self.failures, self.message, self.asked = failures, message, 0

    async def query(self, name: str, *, args: list[Any], result_type: type) -> RunStatusView:
        self.asked += 1
        if self.asked <= self.failures:
            raise WorkflowQueryFailedError(self.message)
        return RunStatusView(workflow="w", run_id=RunId("r1"), phase=RunPhase.SUCCEEDED)


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    async def instantly(_: float) -> None:
        return None

    monkeypatch.setattr(status_query.asyncio, "sleep", instantly)


def test_a_query_the_deadlock_detector_stopped_is_asked_again_and_answers() -> None:
    handle = FailingFirst(2, DEADLOCK)
    view = asyncio.run(queried_status(handle, 5, now="2026-12-06T00:00:00Z"))  # type: ignore[arg-type]
    assert (view.run_id, handle.asked) == ("r1", 3)


def test_a_query_that_keeps_deadlocking_fails_after_three_asks() -> None:
    handle = FailingFirst(3, DEADLOCK)
    with pytest.raises(WorkflowQueryFailedError):
        asyncio.run(queried_status(handle, 5, now="2026-12-06T00:00:00Z"))  # type: ignore[arg-type]
    assert handle.asked == 3


def test_any_other_query_failure_is_not_asked_again() -> None:
    handle = FailingFirst(1, "unknown query type 'status'")
    with pytest.raises(WorkflowQueryFailedError):
        asyncio.run(queried_status(handle, 5, now="2026-12-06T00:00:00Z"))  # type: ignore[arg-type]
    assert handle.asked == 1

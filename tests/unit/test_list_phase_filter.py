"""`list --phase`: a run resumed past the phase gives its place to the next run that is in it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import TypedSearchAttributes

from npaflow.cli.list_handler import run_rows

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@dataclass
class Execution:
    """What `list_workflows` yields for one execution of a run."""

    id: str
    run_id: str
    status: WorkflowExecutionStatus = WorkflowExecutionStatus.FAILED
    start_time: datetime = NOW - timedelta(hours=1)
    close_time: datetime | None = NOW - timedelta(minutes=30)
    task_queue: str = "npaflow"
    typed_search_attributes: TypedSearchAttributes = TypedSearchAttributes.empty

    async def memo(self) -> dict[str, Any]:
        return {}


@dataclass
class Described:
    run_id: str


@dataclass
class Counted:
    count: int


@dataclass
class Handle:
    newest: str

    async def describe(self) -> Described:
        return Described(self.newest)


@dataclass
class Visibility:
    """A server whose phase query matched `matches` (newest first); `newest`: each run's newest execution."""

    matches: list[Execution]
    newest: dict[str, str]
    described: list[str] = field(default_factory=list)
    executions: dict[str, int] = field(default_factory=dict)  # each run's executions, in any phase

    async def _listed(self, limit: int) -> AsyncIterator[Execution]:
        for execution in self.matches[:limit]:
            yield execution

    def list_workflows(self, query: str, limit: int) -> AsyncIterator[Execution]:
        return self._listed(limit)

    async def count_workflows(self, query: str) -> Counted:
        (run_id,) = re.findall(r"WorkflowId = '([^']*)'", query)
        return Counted(self.executions.get(run_id, 1))

    def get_workflow_handle(self, run_id: str) -> Handle:
        self.described.append(run_id)
        return Handle(self.newest[run_id])


def _failed_runs(resumed: set[int], count: int) -> Visibility:
    """`count` failed runs r0.. (newest first); those in `resumed` have a newer execution since."""
    matches = [Execution(f"r{n}", f"r{n}-e1") for n in range(count)]
    newest = {f"r{n}": f"r{n}-e2" if n in resumed else f"r{n}-e1" for n in range(count)}
    return Visibility(matches, newest)


async def test_a_phase_filter_fills_the_limit_past_runs_resumed_since_they_matched() -> None:
    server = _failed_runs(resumed={0, 1}, count=5)
    rows = await run_rows(cast(Client, server), "q", 3, NOW, newest_only=True)
    assert [row.run_id for row in rows] == ["r2", "r3", "r4"]


async def test_a_phase_filter_shows_fewer_rows_only_when_fewer_runs_are_still_in_the_phase() -> None:
    server = _failed_runs(resumed={0, 2}, count=3)
    rows = await run_rows(cast(Client, server), "q", 3, NOW, newest_only=True)
    assert [row.run_id for row in rows] == ["r1"]


async def test_a_phase_filter_asks_each_listed_run_for_its_newest_execution_once() -> None:
    server = _failed_runs(resumed={1}, count=6)
    await run_rows(cast(Client, server), "q", 2, NOW, newest_only=True)
    assert sorted(server.described) == ["r0", "r1", "r2"]


async def test_a_phase_filter_shows_every_execution_of_each_run_not_only_those_in_the_phase() -> None:
    server = _failed_runs(resumed=set(), count=2)
    server.executions = {"r0": 3, "r1": 1}  # r0 failed, was resumed, and failed twice more
    rows = await run_rows(cast(Client, server), "q", 2, NOW, newest_only=True)
    assert [(row.run_id, row.executions) for row in rows] == [("r0", 3), ("r1", 1)]

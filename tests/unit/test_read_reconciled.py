"""What a run's reconcile workflow did, as status, list and the page read it (cli/run_endings.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cli.run_endings import read_reconciled

pytestmark = pytest.mark.unit


class Unreadable:
    """A client whose every describe fails with one RPC status."""

    def __init__(self, status: RPCStatusCode) -> None:
        self.status = status

    def get_workflow_handle(self, *_: Any, **__: Any) -> Unreadable:
        return self

    async def describe(self) -> None:
        raise RPCError("server says no", self.status, b"")


def test_no_reconcile_workflow_means_nothing_needed_reconciling_yet() -> None:
    reconciled = asyncio.run(read_reconciled(Unreadable(RPCStatusCode.NOT_FOUND), "r1"))  # type: ignore[arg-type]
    assert reconciled.result is None and reconciled.note.startswith("no job of this run needed reconciling")


def test_a_server_that_cannot_answer_is_never_read_as_nothing_to_reconcile() -> None:
    reconciled = asyncio.run(read_reconciled(Unreadable(RPCStatusCode.UNAVAILABLE), "r1"))  # type: ignore[arg-type]
    assert reconciled.result is None and not reconciled.settled
    assert reconciled.note == "reconciling: not readable now (server says no)"

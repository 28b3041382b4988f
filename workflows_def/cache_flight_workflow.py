"""`NpaflowCacheFlight`: one per cache key; runs that miss the same key at once launch one job between them.

A mutex with a queue, in Temporal (DESIGN 21's rule for shared state): the first
run to ask holds the key and launches; the others wait, in the order they asked.
When the holder gives the key back (its wave stored an entry, failed or was
cancelled) the next one is granted it and looks the key up again: a hit if the
holder stored, else its own launch. A holder whose run has closed without giving
it back (terminated, its history lost) is found by a check every LIVENESS and
replaced, so no waiter waits past that bound; a worker that dies does not end
the run, so its holder keeps the key and no second job starts. The workflow ends
once nobody holds or waits, after lingering for late requests.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import FailureError

from npaflow.ids import RunId
from npaflow.runtime.cache_messages import (
    FLIGHT_GRANTED_SIGNAL,
    FLIGHT_RELEASE_SIGNAL,
    FLIGHT_REQUEST_SIGNAL,
    FLIGHT_WORKFLOW_TYPE,
    FlightTicket,
)
from npaflow.runtime.contract import CHECK_RUN
from npaflow.runtime.reconcile.models import CheckRunInput
from npaflow.runtime.vocabulary import RunEnding
from workflows_def.activity_calls import ACTIVITY_FAILURES, SHORT_RETRY, call

#: How often the holder's run is checked; the bound on a waiter's wait for a vanished holder.
LIVENESS = timedelta(seconds=15)
#: How long an idle flight stays open for requests already on their way.
LINGER = timedelta(seconds=10)


@workflow.defn(name=FLIGHT_WORKFLOW_TYPE)
class NpaflowCacheFlight:
    """Grants one key to one run at a time, first come first served."""

    def __init__(self) -> None:
        self.holder = ""
        self.waiting: list[str] = []
        self.asked: list[FlightTicket] = []
        self.given_back: list[FlightTicket] = []

    @workflow.signal(name=FLIGHT_REQUEST_SIGNAL)
    def request(self, ticket: FlightTicket) -> None:
        """A run missed the key and asks to launch it."""
        self.asked.append(ticket)

    @workflow.signal(name=FLIGHT_RELEASE_SIGNAL)
    def release(self, ticket: FlightTicket) -> None:
        """A run is done with the key (stored, failed or cancelled) or no longer waits for it."""
        self.given_back.append(ticket)

    @workflow.query(name="holder")
    def holding(self) -> list[str]:
        """The holder, then the waiting runs in order."""
        return [self.holder, *self.waiting]

    @workflow.run
    async def run(self, key: str) -> None:
        """Serve requests until nobody holds or waits, checking a silent holder every LIVENESS."""
        while True:
            await self._settle(key)
            busy = bool(self.holder or self.waiting)
            try:
                await workflow.wait_condition(
                    lambda: bool(self.asked or self.given_back), timeout=LIVENESS if busy else LINGER
                )
            except TimeoutError:
                if not busy:
                    return
                await self._check_holder()

    async def _settle(self, key: str) -> None:
        for ticket in self.given_back:
            if ticket.run_id == self.holder:
                self.holder = ""
            elif ticket.run_id in self.waiting:
                self.waiting.remove(ticket.run_id)
        self.given_back.clear()
        for ticket in self.asked:
            if ticket.run_id == self.holder:
                await self._grant(ticket.run_id, key)  # asked again (a retried request): answer again
            elif ticket.run_id not in self.waiting:
                self.waiting.append(ticket.run_id)
        self.asked.clear()
        while not self.holder and self.waiting:
            candidate = self.waiting.pop(0)
            if await self._grant(candidate, key):
                self.holder = candidate

    async def _grant(self, run_id: str, key: str) -> bool:
        """Tell the run it holds the key; False when the run is gone (closed)."""
        try:
            await workflow.get_external_workflow_handle(run_id).signal(
                FLIGHT_GRANTED_SIGNAL, FlightTicket(run_id=run_id, key=key)
            )
        except FailureError:
            return False
        return True

    async def _check_holder(self) -> None:
        try:
            standing = await call(
                CHECK_RUN,
                CheckRunInput(run_id=RunId(self.holder)),
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=SHORT_RETRY,
                summary=f"is {self.holder} still running?",
            )
        except ACTIVITY_FAILURES:
            return  # unknown is not "gone": keep the holder
        if standing.known and standing.ending is not RunEnding.OPEN:
            self.holder = ""

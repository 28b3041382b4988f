"""`NpaflowCacheFlight`: one per cache key; runs that miss the same key at once launch one job between them.

A mutex with a queue, in Temporal (DESIGN 21's rule for shared state): a run asks
with update-with-start, so the first one learns at once that it holds the key and
launches (no round trip); the others are told to wait, in the order they asked,
and are granted the key by a signal.
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

from npaflow.cache.flight_seats import Seat, SeatMove, seat_moved
from npaflow.document.problems import START_HINTS
from npaflow.ids import RunId
from npaflow.runtime.cache.messages import (
    FLIGHT_ASK_UPDATE,
    FLIGHT_GRANTED_SIGNAL,
    FLIGHT_HOLDER_QUERY,
    FLIGHT_RELEASE_SIGNAL,
    FLIGHT_WORKFLOW_TYPE,
    FlightQueue,
    FlightTicket,
)
from npaflow.runtime.contract import CHECK_RUN
from npaflow.runtime.reconcile.models import CheckRunInput
from npaflow.runtime.vocabulary import RunEnding
from workflows_def.activity_calls import ACTIVITY_FAILURES, SHORT_RETRY, call
from workflows_def.input_refusal import carried_state, continued_as_new, refused

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
        self.passed_over: set[str] = set()  # waiting while another run was granted the key
        self.given_back: list[FlightTicket] = []

    @workflow.update(name=FLIGHT_ASK_UPDATE)
    def ask(self, ticket: FlightTicket) -> bool:
        """A run missed the key: True when it holds the key now, else it waits for the grant signal."""
        run = ticket.run_id
        free = not self.holder and not self.waiting
        seat = seat_moved(self.seat(run), SeatMove.ASK_FREE if free else SeatMove.ASK_BUSY)
        if seat is Seat.HOLDING:
            self.holder = run  # the first to ask, or asked again (a retried ask)
            return True
        if run not in self.waiting:
            self.waiting.append(run)
            self.passed_over.add(run)  # another run holds the key or waits first: look it up again
        return False

    def seat(self, run: str) -> Seat | None:
        """Where the run stands on this flight."""
        if run == self.holder:
            return Seat.HOLDING
        return Seat.WAITING if run in self.waiting else None

    @workflow.signal(name=FLIGHT_RELEASE_SIGNAL)
    def release(self, ticket: FlightTicket) -> None:
        """A run is done with the key (stored, failed or cancelled) or no longer waits for it."""
        self.given_back.append(ticket)

    @workflow.query(name=FLIGHT_HOLDER_QUERY)
    def holding(self) -> list[str]:
        """The holder, then the waiting runs in order."""
        return [self.holder, *self.waiting]

    @workflow.run
    async def run(self, key: object, carried: object = None) -> None:
        """Serve requests until nobody holds or waits, checking a silent holder every LIVENESS.

        `key` is the cache key; `carried` a FlightQueue (both read here: see input_refusal).
        A holder's job may run for days: the queue continues as new when Temporal suggests,
        so the checks never grow one history past its limits.
        """
        if not isinstance(key, str) or not key:
            raise refused(
                f"invalid flight key: {key!r:.80} is not a cache key (hint: {START_HINTS['FlightQueue']})"
            )
        queue = carried_state(carried, FlightQueue, continued=continued_as_new())
        if queue is not None:
            self.holder, self.waiting = queue.holder, list(queue.waiting)
            self.passed_over = set(queue.passed_over)
        while True:
            await self._settle(key)
            if workflow.info().is_continue_as_new_suggested() and workflow.all_handlers_finished():
                queue = FlightQueue(
                    holder=self.holder, waiting=self.waiting, passed_over=sorted(self.passed_over)
                )
                workflow.continue_as_new(args=[key, queue])
            busy = bool(self.holder or self.waiting)
            try:
                await workflow.wait_condition(self._has_work, timeout=LIVENESS if busy else LINGER)
            except TimeoutError:
                if not (self.holder or self.waiting):
                    return
                await self._check_holder()

    def _has_work(self) -> bool:
        return bool(self.given_back) or (not self.holder and bool(self.waiting))

    async def _settle(self, key: str) -> None:
        for ticket in self.given_back:
            seat_moved(self.seat(ticket.run_id), SeatMove.GIVE_BACK)
            if ticket.run_id == self.holder:
                self.holder = ""
            elif ticket.run_id in self.waiting:
                self.waiting.remove(ticket.run_id)
            self.passed_over.discard(ticket.run_id)
        self.given_back.clear()
        while not self.holder and self.waiting:
            candidate = self.waiting[0]
            seat_moved(self.seat(candidate), SeatMove.GRANT)
            self.waiting.pop(0)
            if await self._grant(candidate, key, waited=candidate in self.passed_over):
                self.holder = candidate
                self.passed_over.discard(candidate)
                self.passed_over.update(self.waiting)

    async def _grant(self, run_id: str, key: str, *, waited: bool) -> bool:
        """Tell the run it holds the key (and whether another held it first); False when it is gone."""
        try:
            await workflow.get_external_workflow_handle(run_id).signal(
                FLIGHT_GRANTED_SIGNAL, FlightTicket(run_id=run_id, key=key, waited=waited)
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
            seat_moved(Seat.HOLDING, SeatMove.REPLACE)
            self.holder = ""

"""A run's side of the stage cache's flights: hold a wave's keys in order, give them back at its end.

The lookup that missed already asked for the first key; the others are asked
one at a time after each grant, in key order, so no two runs ever wait on each
other. A run granted a key another run held first looks the wave up again (the
holder may have stored it); one granted at once launches without a second look.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import FailureError

from npaflow.cache import scope_segment
from npaflow.runtime.cache.messages import (
    FLIGHT_RELEASE_SIGNAL,
    CacheLookupResult,
    FlightAnswer,
    FlightTicket,
    RequestFlightInput,
    flight_id,
)
from npaflow.runtime.cache.waits import CacheWait
from npaflow.runtime.contract import REQUEST_FLIGHT
from npaflow.traversal import Wave
from npaflow.waves import WaveKey
from workflows_def.activity_calls import SHORT_RETRY, call_local, now, retries_within
from workflows_def.run_deps import RunDeps


class Flights:
    """The flights a run's waves asked for, and which of them the run was granted."""

    def __init__(self, deps: RunDeps, scope: str) -> None:
        self.state, self.recorder = deps.state, deps.recorder
        self.run_id, self.scope = deps.state.run_id, scope
        self.grants = deps.mailbox.flight_grants  # key -> granted after another run held it (signals)
        self.asked: dict[WaveKey, list[str]] = {}

    def _id(self, key: str) -> str:
        return flight_id(scope_segment(self.scope), key)

    async def board(self, wave: Wave, found: CacheLookupResult, deadline: timedelta) -> bool:
        """Wait until the run holds every key the wave launches; True when another run held one first.

        While another run holds a key, the run says so (status, the page, the UI's details).
        """
        keys = sorted({key.key for key in found.missed_keys()})
        self.asked[wave.key] = keys
        waited = False
        for key in keys:
            if key == found.flying:
                answer = FlightAnswer(holding=found.holding, holder=found.holder)
            else:
                answer = await self._ask(wave, key, deadline)
            if answer.holding:
                self.grants[key] = False
            elif key not in self.grants:
                await self._wait_for(wave, key, answer.holder)
            waited = waited or self.grants[key]
        return waited

    async def _ask(self, wave: Wave, key: str, deadline: timedelta) -> FlightAnswer:
        return await call_local(
            REQUEST_FLIGHT,
            RequestFlightInput(
                flight_id=self._id(key),
                ticket=FlightTicket(run_id=self.run_id, key=key),
                task_queue=workflow.info().task_queue,
            ),
            schedule_to_close_timeout=deadline,
            retry_policy=retries_within(SHORT_RETRY, deadline),
            summary=f"cache flight for {', '.join(wave.states)}",
        )

    async def _wait_for(self, wave: Wave, key: str, holder: str) -> None:
        """Wait for the key's grant, saying whom the wave waits for meanwhile."""
        states = list(dict.fromkeys(wave.states))
        wait = CacheWait(wave=str(wave.key), states=states, key=key, holder=holder, since=now())
        self.state.cache_flight_waiting(wait)
        await self.recorder.sync()
        try:
            await workflow.wait_condition(lambda: key in self.grants)
        finally:
            self.state.cache_flight_boarded(wait.wave)  # shown with the lookup or launch that follows

    def holds(self, wave: Wave) -> bool:
        """Whether the wave asked for flights (so its store gives them back)."""
        return wave.key in self.asked

    async def land(self, wave: Wave, *, released: bool) -> None:
        """Forget the wave's flights, giving them back unless its store already did."""
        for key in self.asked.pop(wave.key, []):
            self.grants.pop(key, None)
            if released:
                continue
            handle = workflow.get_external_workflow_handle(self._id(key))
            try:  # noqa: SIM105 (workflow code imports no contextlib)
                await handle.signal(FLIGHT_RELEASE_SIGNAL, FlightTicket(run_id=self.run_id, key=key))
            except FailureError:
                pass  # the flight ended: nothing is held there any more

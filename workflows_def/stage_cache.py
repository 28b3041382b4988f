"""The stage cache in the run (DESIGN 20): asked before a cached wave launches, told after it succeeded.

A lookup that fails (storage unreadable, a bug) is never read as a hit: the wave
launches as if there were no cache, and the ledger says why. A store that fails
never fails a run whose wave succeeded. Runs whose spec caches nothing never
reach this code, so their histories (and the recorded ones) are unchanged; runs
that do record the STAGE_CACHE patch once.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import FailureError, is_cancelled_exception

from npaflow.cache import scope_segment
from npaflow.runtime.cache_messages import (
    FLIGHT_RELEASE_SIGNAL,
    CacheLookupInput,
    CacheLookupResult,
    CacheMode,
    CacheStoreInput,
    FlightTicket,
    RequestFlightInput,
    flight_id,
)
from npaflow.runtime.contract import CACHE_LOOKUP, CACHE_STORE, REQUEST_FLIGHT
from npaflow.runtime.ledger import CachedStep
from npaflow.runtime.metrics import CacheResult, Metric
from npaflow.traversal import Wave
from npaflow.waves import WaveKey
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    SHORT_RETRY,
    call,
    classify_activity_error,
    now,
    retries_within,
)
from workflows_def.metrics import count
from workflows_def.patches import STAGE_CACHE
from workflows_def.recorder import RunDeps


class StageCache:
    """Looks a wave up before its launch and stores its entries after its success."""

    def __init__(self, deps: RunDeps) -> None:
        self.request, self.loaded, self.state = deps.request, deps.loaded, deps.state
        self.scope = deps.request.cache_scope or deps.loaded.spec.metadata.name
        self.grants = deps.flight_grants
        self.asked: dict[WaveKey, list[str]] = {}  # flights each wave asked for, given back at its end

    def applies(self, wave: Wave) -> bool:
        """True when the wave has cached steps and this run uses the cache (patch recorded once)."""
        if self.request.cache is CacheMode.OFF or not self.loaded.cache_root:
            return False
        return any(step.cache is not None for step in wave.steps) and workflow.patched(STAGE_CACHE)

    def _deadline(self) -> dict[str, object]:
        deadline = timedelta(seconds=max(300.0, self.request.transport_recovery_seconds))
        return {"schedule_to_close_timeout": deadline, "retry_policy": retries_within(SHORT_RETRY, deadline)}

    async def lookup(self, wave: Wave) -> CacheLookupResult:
        """Each cached step's key and verdict; served when its outputs were copied into this run's."""
        request = CacheLookupInput(
            run_id=self.state.run_id,
            wave=wave,
            catalog=self.loaded.catalog,
            cache_root=self.loaded.cache_root,
            scope=self.scope,
            mode=self.request.cache,
            secret_env=tuple(self.request.secret_env),
            infra=self.request.infra,
        )
        try:
            return await call(
                CACHE_LOOKUP, request, summary=f"cache lookup: {', '.join(wave.states)}", **self._deadline()
            )
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            unread = f"the cache could not be read, so the wave runs: {message}"
            steps = [CachedStep(state=s.state, key="", reason=unread) for s in wave.steps if s.cache]
            return CacheLookupResult(keys=(), steps=tuple(steps))

    def flies(self, wave: Wave, found: CacheLookupResult) -> bool:
        """A miss of a wave of cached steps only, in ON mode: its keys are launched once across runs."""
        cached_only = all(step.cache is not None for step in wave.steps)
        return self.request.cache is CacheMode.ON and cached_only and bool(found.keys) and not found.served

    async def take_flight(self, wave: Wave, found: CacheLookupResult) -> CacheLookupResult:
        """Hold every key of the wave (in key order, so no two runs wait on each other), then look again.

        The first run to ask a key holds it; the others wait here until it gives the key
        back, then look it up again: a hit when the holder stored its entry.
        """
        keys = sorted({key.key for key in found.keys})
        self.asked[wave.key] = keys
        for key in keys:
            await call(
                REQUEST_FLIGHT,
                RequestFlightInput(
                    flight_id=flight_id(scope_segment(self.scope), key),
                    ticket=FlightTicket(run_id=self.state.run_id, key=key),
                    task_queue=workflow.info().task_queue,
                ),
                summary=f"cache flight for {', '.join(wave.states)}",
                **self._deadline(),
            )
            await workflow.wait_condition(lambda key=key: key in self.grants)  # type: ignore[misc]
        return await self.lookup(wave)

    async def land(self, wave: Wave) -> None:
        """Give back every flight the wave asked for (held or still waited for)."""
        for key in self.asked.pop(wave.key, []):
            self.grants.discard(key)
            handle = workflow.get_external_workflow_handle(flight_id(scope_segment(self.scope), key))
            try:  # noqa: SIM105 (workflow code imports no contextlib)
                await handle.signal(FLIGHT_RELEASE_SIGNAL, FlightTicket(run_id=self.state.run_id, key=key))
            except FailureError:
                pass  # the flight ended: nothing is held there any more

    def serve(self, wave: Wave, attempt: int, found: CacheLookupResult) -> None:
        """Record the wave as succeeded from the cache: no job, its GPU-hours saved."""
        self.state.waves.served_from_cache(wave, attempt, now=now(), cache=list(found.steps))
        self.counted(found)

    def counted(self, found: CacheLookupResult) -> None:
        """Count the wave's cached steps by hit or miss, and what the hits saved."""
        spec = self.state.workflow
        for step in found.steps:
            result = CacheResult.HIT if step.hit and found.served else CacheResult.MISS
            count(Metric.CACHE_LOOKUPS, spec=spec, result=result.value)
        saved = sum(step.gpu_hours_saved for step in found.steps if step.hit) if found.served else 0.0
        if saved:
            count(Metric.CACHE_GPU_HOURS_SAVED, saved, spec=spec)

    async def store(self, wave: Wave, attempt: int, found: CacheLookupResult) -> None:
        """Write the entries of a success; what was stored (or why not) goes to the attempt's record."""
        if not found.keys or self.request.cache is CacheMode.OFF:
            return
        record = self.state.waves.attempt(wave.key, attempt)
        request = CacheStoreInput(
            run_id=self.state.run_id,
            wave=wave,
            wave_key=str(wave.key),
            job_id=record.job_id,
            gpu_hours=record.gpu_hours,
            cache_root=self.loaded.cache_root,
            scope=self.scope,
            keys=found.keys,
            created_at=now(),
        )
        try:
            stored = await call(
                CACHE_STORE, request, summary=f"cache store: {', '.join(wave.states)}", **self._deadline()
            )
            steps = list(stored.steps)
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            why_not = f"not stored: {message}"
            steps = [CachedStep(state=k.state, key=k.key, reason=why_not) for k in found.keys]
        why = {step.state: step.reason for step in record.cache}
        merged = [s if s.reason else s.model_copy(update={"reason": why.get(s.state, "")}) for s in steps]
        self.state.waves.cache_stored(wave.key, attempt, merged)

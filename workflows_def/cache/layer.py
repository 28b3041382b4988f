"""The stage cache in the run (DESIGN 20): asked before a cached wave launches, told after it succeeded.

A lookup that fails (storage unreadable, a bug) is never read as a hit: the wave
launches as if there were no cache, and the ledger says why. A store that fails
never fails a run whose wave succeeded. Runs whose spec caches nothing never
reach this code, so their histories (and the recorded ones) are unchanged; runs
that do record the STAGE_CACHE patch once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import is_cancelled_exception

from npaflow.images import wave_images
from npaflow.runtime.cache.messages import (
    CacheLookupInput,
    CacheLookupResult,
    CacheMode,
    CacheStoreInput,
    StepKey,
)
from npaflow.runtime.contract import CACHE_LOOKUP, CACHE_STORE
from npaflow.runtime.ledger import CachedStep, WaveAttemptRecord
from npaflow.runtime.metrics import CacheResult, Metric
from npaflow.traversal import Wave, WaveOutcome
from npaflow.waves import WaveKey
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    SHORT_RETRY,
    call_local,
    classify_activity_error,
    now,
    retries_within,
)
from workflows_def.cache.flights import Flights
from workflows_def.cleanup import cleaned_up
from workflows_def.metrics import count
from workflows_def.patches import STAGE_CACHE
from workflows_def.run_deps import RunDeps
from workflows_def.wave_layers import Next, WaveCall


class StageCache:
    """Looks a wave up before its launch and stores its entries after its success."""

    def __init__(self, deps: RunDeps) -> None:
        self.request, self.loaded, self.state = deps.request, deps.loaded, deps.state
        self.scope = deps.request.cache_scope or deps.loaded.spec.metadata.name
        self.flights = Flights(deps, self.scope)
        self.released: set[WaveKey] = set()  # waves whose store gave their flights back

    async def around(self, call: WaveCall, next_: Next) -> WaveOutcome:
        """Serve the wave from the cache, or pass its misses on and store them after a success.

        A wave without cached steps, or one re-finding the job an earlier execution
        launched, passes straight through.
        """
        wave = call.wave
        if call.reconcile or not self.applies(wave):
            return await next_(call)
        found = await self.lookup(wave)
        return await cleaned_up(self._served_or_next(call, found, next_), lambda: self.land(wave))

    async def _served_or_next(self, call: WaveCall, found: CacheLookupResult, next_: Next) -> WaveOutcome:
        """Serve the wave (after another run's flight landed), or run its misses and store them."""
        wave = call.wave
        if self.flies(wave, found):
            found = await self.take_flight(wave, found)
        if found.served:
            self.serve(wave, call.attempt, found)
            return WaveOutcome(succeeded=True)
        self.counted(found)

        async def stored(attempt: int) -> None:
            await self.store(wave, attempt, found)

        return await next_(replace(call, cache=found, succeeded=stored))

    def applies(self, wave: Wave) -> bool:
        """True when the wave has cached steps and this run uses the cache (patch recorded once)."""
        if self.request.cache is CacheMode.OFF or not self.loaded.cache_root:
            return False
        return any(step.cache is not None for step in wave.steps) and workflow.patched(STAGE_CACHE)

    def _deadline(self) -> timedelta:
        return timedelta(seconds=max(300.0, self.request.transport_recovery_seconds))

    def _options(self, summary: str) -> dict[str, object]:
        deadline = self._deadline()
        return {
            "schedule_to_close_timeout": deadline,
            "retry_policy": retries_within(SHORT_RETRY, deadline),
            "summary": summary,
        }

    async def lookup(self, wave: Wave, *, fly: bool = True) -> CacheLookupResult:
        """Each cached step's key and verdict; served when its outputs were copied into this run's.

        With `fly`, a miss of a wave of cached steps only (ON mode) asks for its first key's flight.
        """
        cached_only = all(step.cache is not None for step in wave.steps)
        flying = fly and cached_only and self.request.cache is CacheMode.ON
        request = CacheLookupInput(
            run_id=self.state.run_id,
            wave=wave,
            catalog=self.loaded.catalog,
            cache_root=self.loaded.cache_root,
            scope=self.scope,
            mode=self.request.cache,
            secret_env=tuple(self.request.secret_env),
            infra=self.request.infra,
            images=self.request.images,
            flight_queue=workflow.info().task_queue if flying else "",
        )
        try:
            return await call_local(
                CACHE_LOOKUP, request, **self._options(f"cache lookup: {', '.join(wave.states)}")
            )
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            unread = f"the cache could not be read, so the wave runs: {message}"
            steps = [
                CachedStep(state=s.state, key="", item=s.item, reason=unread) for s in wave.steps if s.cache
            ]
            return CacheLookupResult(keys=(), steps=tuple(steps))

    def flies(self, wave: Wave, found: CacheLookupResult) -> bool:
        """The lookup missed and asked for a flight: the wave's keys are launched once across runs."""
        return bool(found.flying) and not found.served

    async def take_flight(self, wave: Wave, found: CacheLookupResult) -> CacheLookupResult:
        """Hold every key of the wave; look again when another run held one first (it may have stored)."""
        waited = await self.flights.board(wave, found, self._deadline())
        return await self.lookup(wave, fly=False) if waited else found

    async def land(self, wave: Wave) -> None:
        """Give back the wave's flights, unless its store already did."""
        await self.flights.land(wave, released=wave.key in self.released)
        self.released.discard(wave.key)

    def serve(self, wave: Wave, attempt: int, found: CacheLookupResult) -> None:
        """Record the wave as succeeded from the cache: no job, its GPU-hours saved."""
        images = wave_images(wave, self.loaded.catalog, self.request.images)
        self.state.waves.served_from_cache(wave, attempt, now=now(), cache=list(found.steps), images=images)
        self.counted(found)

    def counted(self, found: CacheLookupResult) -> None:
        """Count the wave's cached steps by hit or miss, and what the hits saved."""
        spec = self.state.workflow
        for step in found.steps:
            result = CacheResult.HIT if step.hit else CacheResult.MISS
            count(Metric.CACHE_LOOKUPS, spec=spec, result=result.value)
        saved = sum(step.gpu_hours_saved for step in found.steps if step.hit)
        if saved:
            count(Metric.CACHE_GPU_HOURS_SAVED, saved, spec=spec)

    async def store(self, wave: Wave, attempt: int, found: CacheLookupResult) -> None:
        """Write the entries of the steps a success launched; what was stored goes to its record.

        Each entry names the job that made its outputs: a retried fan-out batch's members
        an earlier attempt ran (`carried`) are stored with that attempt's job.
        """
        keys = found.missed_keys()
        if not keys or self.request.cache is CacheMode.OFF:
            return
        record = self.state.waves.attempt(wave.key, attempt)
        ran_by = {member.item: member.attempt for member in record.carried}
        parts: dict[int, list[StepKey]] = {}
        for key in keys:
            parts.setdefault(ran_by.get(key.item, attempt), []).append(key)
        steps: list[CachedStep] = []
        for ran, part in sorted(parts.items()):
            made = self.state.waves.attempt(wave.key, ran)
            whose = made_by(wave, made) if ran_by else wave
            steps += await self._store(whose, made, part, release=len(parts) == 1)
        why = {step.state: step.reason for step in record.cache}
        merged = [s if s.reason else s.model_copy(update={"reason": why.get(s.state, "")}) for s in steps]
        merged += [step for step in record.cache if step.hit]  # served members keep their hit
        self.state.waves.cache_stored(wave.key, attempt, merged)

    async def _store(
        self, wave: Wave, made: WaveAttemptRecord, keys: list[StepKey], *, release: bool
    ) -> list[CachedStep]:
        """Write the entries of `keys`, whose outputs the job of attempt `made` wrote."""
        request = CacheStoreInput(
            run_id=self.state.run_id,
            wave=wave,
            wave_key=str(wave.key),
            job_id=made.job_id,
            gpu_hours=made.gpu_hours,
            cache_root=self.loaded.cache_root,
            scope=self.scope,
            keys=tuple(keys),
            created_at=now(),
            release_flights=release and self.flights.holds(wave),
        )
        try:
            stored = await call_local(
                CACHE_STORE, request, **self._options(f"cache store: {', '.join(wave.states)}")
            )
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            why_not = f"not stored: {message}"
            return [CachedStep(state=k.state, key=k.key, item=k.item, reason=why_not) for k in keys]
        if stored.released:
            self.released.add(wave.key)
        return list(stored.steps)


def made_by(wave: Wave, made: WaveAttemptRecord) -> Wave:
    """The members the job of attempt `made` ran (its GPU-hours are shared among them)."""
    names = {shape.task_name for shape in made.task_shapes}
    steps = tuple(step for step in wave.steps if step.task_name in names)
    return wave.model_copy(update={"steps": steps}) if steps else wave

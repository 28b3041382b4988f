"""The stage cache's activities (DESIGN 20, docs/cache.md): key, verify and serve a wave; store a success.

Front door: `CacheActivities`. Inside: `keys.py` (a step's key from storage),
`verify.py` (an entry re-checked object by object), `materialize.py` (a hit's
outputs copied into this run's URIs), `store.py` (an entry per cached step).
"""

from __future__ import annotations

from contextlib import suppress
from datetime import UTC, datetime

from temporalio import activity

from activities.cache.admin import administer
from activities.cache.flight import release_flights, request_flight
from activities.cache.keys import step_key
from activities.cache.materialize import materialize, targets
from activities.cache.store import store_entry
from activities.cache.verify import verdict
from activities.context import ActivityContext
from activities.errors import mapped_errors
from npaflow.cache import CacheEntry, entry_uri, key_record_uri, scope_segment
from npaflow.errors import NpaflowError
from npaflow.ledger_paths import CACHE_DIR
from npaflow.runtime.cache.admin import CacheAdminInput, CacheAdminResult
from npaflow.runtime.cache.messages import (
    CacheLookupInput,
    CacheLookupResult,
    CacheMode,
    CacheStoreInput,
    CacheStoreResult,
    FlightAnswer,
    FlightTicket,
    RequestFlightInput,
    StepKey,
    flight_id,
)
from npaflow.runtime.contract import CACHE_ADMIN, CACHE_LOOKUP, CACHE_STORE, REQUEST_FLIGHT
from npaflow.runtime.ledger import CachedStep
from npaflow.steps import PlanStep

__all__ = ["CacheActivities"]


class CacheActivities:
    """`cache_lookup` before a wave with cached steps launches; `cache_store` after it succeeded."""

    def __init__(self, context: ActivityContext) -> None:
        self.storage = context.storage
        self.default_root = f"{context.ledger_base()}/{CACHE_DIR}"

    @activity.defn(name=CACHE_LOOKUP.name)
    @mapped_errors
    async def cache_lookup(self, request: CacheLookupInput) -> CacheLookupResult:
        """Key every cached step; in ON mode serve the wave when every step hits (outputs copied)."""
        cached = [step for step in request.wave.steps if step.cache is not None]
        keys = tuple([await step_key(self.storage, step, request) for step in cached])
        if request.mode is not CacheMode.ON:
            reason = f"--cache {request.mode.value}"
            skipped = [
                CachedStep(
                    state=k.state,
                    key=k.key,
                    item=k.item,
                    entry=entry_uri(request.cache_root, request.scope, k.key),
                    reason=reason,
                )
                for k in keys
            ]
            await self._remember(keys, skipped)
            return CacheLookupResult(keys=keys, steps=tuple(skipped))
        result = await self._look(request, cached, keys)
        await self._remember(keys, [step for step in result.steps if not step.hit])
        if result.served or not request.flight_queue or len(cached) < len(request.wave.steps):
            return result
        first = min(key.key for key in result.missed_keys())  # held in order: no two runs wait on each other
        answer = await request_flight(
            RequestFlightInput(
                flight_id=flight_id(scope_segment(request.scope), first),
                ticket=FlightTicket(run_id=request.run_id, key=first),
                task_queue=request.flight_queue,
            )
        )
        if answer.holding:
            # Granted at once, yet asked after reading: a holder may have stored and given the
            # key back in between. Look again now that nobody else can store it.
            again = await self._look(request, cached, keys)
            if again.served:
                await release_flights(request.run_id, request.scope, [first])
                return again
        return result.model_copy(update={"flying": first, "holding": answer.holding, "holder": answer.holder})

    async def _look(
        self, request: CacheLookupInput, cached: list[PlanStep], keys: tuple[StepKey, ...]
    ) -> CacheLookupResult:
        """Every key's verdict now, and the wave served when all of them hit."""
        now = datetime.now(UTC)
        verdicts = [
            await verdict(self.storage, request.cache_root, request.scope, key, step, now)
            for key, step in zip(keys, cached, strict=True)
        ]
        return await self._serve(request, cached, keys, verdicts)

    async def _remember(self, keys: tuple[StepKey, ...], misses: list[CachedStep]) -> None:
        """Write each miss's key components beside where its entry goes (`npaflow cache explain`)."""
        by_key = {key.key: key for key in keys}
        for step in misses:
            if step.entry and step.key in by_key:
                uri = key_record_uri(step.entry)
                with suppress(NpaflowError):  # only explanations depend on it: never the run
                    await self.storage.for_uri(uri).write_text(uri, by_key[step.key].model_dump_json())

    async def _serve(
        self,
        request: CacheLookupInput,
        cached: list[PlanStep],
        keys: tuple[StepKey, ...],
        verdicts: list[tuple[CachedStep, CacheEntry | None]],
    ) -> CacheLookupResult:
        """Copy each hit's outputs into this run's URIs; the wave is served when every step hit.

        A hit whose copy did not arrive intact becomes a miss naming the object; the
        other steps' verdicts stand (each member of a batch is looked up on its own).
        """
        steps = [found for found, _ in verdicts]
        for index, ((found, entry), step) in enumerate(zip(verdicts, cached, strict=True)):
            if entry is None:
                continue
            pairs = targets(entry, step, request.run_id)
            problem = pairs if isinstance(pairs, str) else await materialize(self.storage, pairs)
            if problem:
                steps[index] = found.model_copy(update={"hit": False, "reason": problem})
        served = len(cached) == len(request.wave.steps) and all(step.hit for step in steps)
        return CacheLookupResult(keys=keys, steps=tuple(steps), served=served)

    @activity.defn(name=CACHE_ADMIN.name)
    @mapped_errors
    async def cache_admin(self, request: CacheAdminInput) -> CacheAdminResult:
        """`npaflow cache list | explain | purge` (activities/cache/admin.py)."""
        return await administer(self.storage, self.default_root, request)

    @activity.defn(name=REQUEST_FLIGHT.name)
    @mapped_errors
    async def request_cache_flight(self, request: RequestFlightInput) -> FlightAnswer:
        """Ask the key's flight: held now, or who holds it (activities/cache/flight.py)."""
        return await request_flight(request)

    @activity.defn(name=CACHE_STORE.name)
    @mapped_errors
    async def cache_store(self, request: CacheStoreInput) -> CacheStoreResult:
        """Write an entry per cached step of a success (a write that fails is reported, not raised)."""
        stored = [await store_entry(self.storage, request, key) for key in request.keys]
        if request.release_flights:
            await release_flights(request.run_id, request.scope, sorted({key.key for key in request.keys}))
        return CacheStoreResult(steps=tuple(stored), released=request.release_flights)

"""Is an entry still what it says? Read it, check its age, and ask storage about every object it lists."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import ValidationError

from activities.cache.keys import objects_at
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.cache import CacheEntry, ObjectFacts, entry_uri, mismatches, object_uri
from npaflow.errors import ConfigurationError
from npaflow.runtime.cache.messages import StepKey
from npaflow.runtime.ledger import CachedStep
from npaflow.steps import PlanStep

#: An entry lists at most MAX_LISTED_KEYS objects per output; its JSON stays well below this.
MAX_ENTRY_BYTES = 64 * 1024 * 1024


#: The reason of a lookup that found nothing at the key's place.
NO_ENTRY = "no entry for this key"


class Damaged(str):
    """Why the object at an entry's place cannot be trusted: a miss, replaced by the next success."""


async def read_entry(storage: StorageRouter, uri: str) -> CacheEntry | str:
    """The entry at `uri`, or why there is none to use (a damaged entry is a miss, never a hit).

    Damaged: not a regular file (a FIFO is never opened), not UTF-8, not JSON, not an
    entry. Only a storage outage (a TransportError) is raised: that is no verdict at all.
    """
    try:
        text = await storage.for_uri(uri).read_text(uri, max_bytes=MAX_ENTRY_BYTES)
    except ArtifactMissingError:
        return NO_ENTRY
    except ConfigurationError as exc:  # not a regular file, not text, too large, not readable
        return Damaged(f"damaged entry at {uri} ({exc}); the next success replaces it")
    try:
        return CacheEntry.model_validate_json(text)
    except ValidationError as exc:
        return Damaged(
            f"damaged entry at {uri} (not an entry: {exc.error_count()} problem(s)); "
            "the next success replaces it"
        )


async def verdict(
    storage: StorageRouter, root: str, scope: str, key: StepKey, step: PlanStep, now: datetime
) -> tuple[CachedStep, CacheEntry | None]:
    """A hit with its entry, or a miss that says why."""
    location = entry_uri(root, scope, key.key)
    miss = CachedStep(state=key.state, key=key.key, item=key.item, entry=location)
    found = await read_entry(storage, location)
    if isinstance(found, str):
        return miss.model_copy(update={"reason": found}), None
    if found.key != key.key:
        reason = f"damaged entry at {location} (it holds key {found.key}); the next success replaces it"
        return miss.model_copy(update={"reason": reason}), None
    max_age = step.cache.max_age_seconds if step.cache else None
    if found.expired(timedelta(seconds=max_age) if max_age else None, now):
        return miss.model_copy(
            update={"reason": f"the entry of {found.created_at.isoformat()} is older than max_age"}
        ), None
    observed: dict[str, ObjectFacts | None] = {}
    for output in found.outputs:
        for facts in await objects_at(storage, output.uri):
            observed[object_uri(output, facts)] = facts
    changed = mismatches(found, observed)
    if changed:
        text = "; ".join(m.text() for m in changed[:5]) + (
            f" (and {len(changed) - 5} more)" if len(changed) > 5 else ""
        )
        return miss.model_copy(update={"reason": f"cached output changed since it was stored: {text}"}), None
    hit = miss.model_copy(
        update={
            "hit": True,
            "source_run": found.source_run,
            "source_job": found.job_id,
            "gpu_hours_saved": found.gpu_hours,
        }
    )
    return hit, found

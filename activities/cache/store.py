"""After a launched wave succeeded with verified outputs: one entry per cached step, written whole."""

from __future__ import annotations

from datetime import datetime

from pydantic import ValidationError

from activities.cache.keys import objects_at
from activities.cache.verify import Damaged, read_entry
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.cache import CachedOutput, CacheEntry, entry_uri
from npaflow.errors import InfraError, NpaflowError
from npaflow.runtime.cache.messages import CacheStoreInput, StepKey
from npaflow.runtime.ledger import CachedStep


async def store_entry(storage: StorageRouter, request: CacheStoreInput, key: StepKey) -> CachedStep:
    """Write the step's entry; a definite refusal is recorded, never fatal to the run that succeeded.

    A missing or changed output, or an entry that fails validation, is `not stored`. A
    transport or unclassified storage error is raised: the activity is retried (its flight
    still held), so a passing outage never drops the entry.
    """
    uri = entry_uri(request.cache_root, request.scope, key.key)
    record = CachedStep(state=key.state, key=key.key, item=key.item, entry=uri)
    step = next(s for s in request.wave.steps if (s.state, s.item) == (key.state, key.item))
    twins = (step.keyed or step).outputs
    share = request.gpu_hours / max(1, len(request.wave.steps))
    try:
        outputs = [
            CachedOutput(
                declared=twin.uri,
                uri=artifact.uri,
                objects=tuple(await objects_at(storage, artifact.uri)),
            )
            for artifact, twin in zip(step.outputs, twins, strict=True)
        ]
        entry = CacheEntry(
            key=key.key,
            components=key.components,
            outputs=tuple(outputs),
            source_run=request.run_id,
            wave_key=request.wave_key,
            job_id=request.job_id,
            gpu_hours=share,
            created_at=datetime.fromisoformat(request.created_at),
        )
    except (ValidationError, NpaflowError, ArtifactMissingError) as exc:
        if isinstance(exc, InfraError):
            raise  # in doubt: retried, never recorded as a refusal
        return record.model_copy(update={"reason": f"not stored: {_short(exc)}"})
    if isinstance(await read_entry(storage, uri), Damaged):
        await storage.for_uri(uri).delete(uri)  # a FIFO or a directory is never written through
    await storage.for_uri(uri).write_text(uri, entry.model_dump_json(by_alias=True, indent=1))
    return record.model_copy(update={"stored": True})


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(str(error["msg"]) for error in exc.errors())
    return str(exc)

"""A hit's outputs copied into this run's own declared output URIs, then checked there.

Downstream states, decisions and `npaflow artifacts` then find them where the
spec says. Copies are server-side on S3 and atomic renames on files; copying
again (a retried activity) writes the same bytes.
"""

from __future__ import annotations

from activities.cache.keys import objects_at
from activities.storage import StorageRouter
from npaflow.cache import CachedOutput, CacheEntry, object_uri
from npaflow.steps import PlanStep


def _scheme(uri: str) -> str:
    return "s3" if uri.startswith("s3://") else "file"


def targets(entry: CacheEntry, step: PlanStep, run_id: str) -> list[tuple[CachedOutput, str]] | str:
    """Each cached output and where this run declares it, or why they do not pair up."""
    twins = (step.keyed or step).outputs
    declared = {twin.uri: artifact.uri for artifact, twin in zip(step.outputs, twins, strict=True)}
    pairs: list[tuple[CachedOutput, str]] = []
    for output in entry.outputs:
        target = declared.get(output.declared)
        if target is None:
            return f"the entry's output {output.declared} is not declared by this run's {step.state}"
        if _scheme(target) != _scheme(output.uri):
            return f"cannot copy {output.uri} to {target} across stores"
        pairs.append((output, target))
    return pairs


async def materialize(storage: StorageRouter, pairs: list[tuple[CachedOutput, str]]) -> str:
    """Copy every cached object to this run's URI; "" when all arrived intact, else what did not.

    Intact means the entry's own evidence (size and the store's content digest: sha256 of
    a file, the MD5 ETag of an S3 object's bytes); a copy that differs is deleted, so
    nothing the entry did not vouch for is left at the run's URIs.
    """
    placed_uris: list[str] = []
    for output, target in pairs:
        store = storage.for_uri(target)
        placed = CachedOutput(declared=output.declared, uri=target, objects=output.objects)
        for facts in output.objects:
            source, destination = object_uri(output, facts), object_uri(placed, facts)
            if source != destination:
                await store.copy(source, destination)
                placed_uris.append(destination)
        arrived = {facts.key: facts for facts in await objects_at(storage, target)}
        for facts in output.objects:
            copy = arrived.get(facts.key)
            if copy is None or (copy.size, copy.etag) != (facts.size, facts.etag):
                for uri in placed_uris:
                    await storage.for_uri(uri).delete(uri)
                what = "is missing" if copy is None else "differs from the entry's content"
                return f"{object_uri(placed, facts)} did not arrive intact (the copy {what})"
    return ""

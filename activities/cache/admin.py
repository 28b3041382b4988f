"""`npaflow cache list | explain | purge` on a worker: entries read, explained and deleted where they live."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.cache.verify import Damaged, read_entry
from activities.ledger import read_ledger
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.cache import KEYS_DIR, CacheEntry, differing, key_record_uri, scope_uri
from npaflow.cache.words import changes
from npaflow.errors import ConfigurationError
from npaflow.runtime.cache.admin import (
    MAX_LISTED_ENTRIES,
    CacheAction,
    CacheAdminInput,
    CacheAdminResult,
    CacheExplanation,
    CacheRow,
    purge_selects,
)
from npaflow.runtime.cache.messages import StepKey
from npaflow.runtime.ledger import CachedStep


async def entries_under(
    storage: StorageRouter, prefix: str, limit: int
) -> tuple[list[tuple[str, CacheEntry | Damaged]], bool]:
    """The entries under a prefix (at most `limit`), damaged ones too, and whether there were more."""
    keys = [
        key
        for key in await storage.for_uri(prefix).list_keys(prefix)
        if key.endswith(".json") and f"{KEYS_DIR}/" not in key
    ]
    found: list[tuple[str, CacheEntry | Damaged]] = []
    for key in keys[:limit]:
        uri = prefix.rstrip("/") + "/" + key
        entry = await read_entry(storage, uri)
        if isinstance(entry, CacheEntry | Damaged):
            found.append((uri, entry))
    return found, len(keys) > limit


def readable(entries: list[tuple[str, CacheEntry | Damaged]]) -> list[tuple[str, CacheEntry]]:
    """The entries that could be read."""
    return [(uri, entry) for uri, entry in entries if isinstance(entry, CacheEntry)]


def row(uri: str, entry: CacheEntry | Damaged) -> CacheRow:
    """An entry as one `cache list` line (a damaged one: its scope and key from where it lies)."""
    if isinstance(entry, Damaged):
        scope, _, name = uri.rstrip("/").rpartition("/")
        return CacheRow(
            scope=scope.rpartition("/")[2],
            state="?",
            key="sha256:" + name.removesuffix(".json"),
            created_at="",
            source_run="",
            source_job="",
            gpu_hours=0.0,
            objects=0,
            uri=uri,
            damaged=str(entry),
        )
    return CacheRow(
        scope=entry.components.scope,
        state=entry.components.state,
        key=entry.key,
        created_at=entry.created_at.isoformat(),
        source_run=entry.source_run,
        source_job=entry.job_id,
        gpu_hours=entry.gpu_hours,
        objects=sum(len(output.objects) for output in entry.outputs),
        uri=uri,
    )


async def explain(storage: StorageRouter, request: CacheAdminInput) -> CacheExplanation:
    """The state's newest cached attempt: its key's components, and where the newest entry differs.

    Raises:
        ConfigurationError: the run has no ledger, or never looked its state up in the cache.
    """
    ledger = await read_ledger(storage, request.ledger_uri)
    if ledger is None:
        raise ConfigurationError(f"no ledger at {request.ledger_uri} (the run wrote none yet)")
    looked = [step for wave in ledger.waves for step in wave.cache if step.state == request.state]
    if not looked:
        cached = sorted({step.state for wave in ledger.waves for step in wave.cache})
        ran = sorted({state for wave in ledger.waves for state in wave.states})
        if request.state not in ran:
            raise ConfigurationError(
                f"run {ledger.run_id} has no state {request.state!r}; its cached states: "
                f"{', '.join(cached) or 'none'} (every state it ran: {', '.join(ran) or 'none yet'})"
            )
        raise ConfigurationError(
            f"state {request.state!r} of run {ledger.run_id} was never looked up in the stage cache "
            "(it has no cache:, or the run ran with --cache off); its cached states: "
            f"{', '.join(cached) or 'none'}"
        )
    step = looked[-1]
    if not step.entry:
        raise ConfigurationError(f"state {request.state!r}: the run recorded no cache entry location for it")
    mine = await _components_of(storage, step)
    scope_prefix = step.entry.rpartition("/")[0] + "/"
    entries, _ = await entries_under(storage, scope_prefix, MAX_LISTED_ENTRIES)
    same_state = [
        (uri, entry)
        for uri, entry in readable(entries)
        if entry.components.state == request.state and entry.key != step.key  # not the one it stored
    ]
    if not same_state:
        return CacheExplanation(state=request.state, step=step, components=_dump(mine))
    newest_uri, newest = max(same_state, key=lambda pair: pair[1].created_at)
    changed = differing(newest.components, mine.components) if mine else []
    words = changes(newest.components, mine.components) if mine else []
    return CacheExplanation(
        state=request.state,
        step=step,
        components=_dump(mine),
        newest_entry=newest_uri,
        differing=changed,
        changes=words,
    )


async def _components_of(storage: StorageRouter, step: CachedStep) -> StepKey | None:
    """The key's components: from its entry when it has one, else from the key record of its miss."""
    entry = await read_entry(storage, step.entry) if step.entry else "no entry"
    if isinstance(entry, CacheEntry):
        return StepKey(state=step.state, key=entry.key, components=entry.components)
    uri = key_record_uri(step.entry) if step.entry else ""
    try:
        return StepKey.model_validate_json(await storage.for_uri(uri).read_text(uri)) if uri else None
    except ArtifactMissingError:
        return None


def _dump(key: StepKey | None) -> dict[str, object]:
    return key.components.model_dump(mode="json") if key else {}


async def purge(storage: StorageRouter, root: str, request: CacheAdminInput) -> CacheAdminResult:
    """Delete what the request selects (with key records), or with `dry_run` list it.

    Raises:
        ConfigurationError: a `--key` or `--run` that matches nothing, or a key prefix matching
            more than one entry.
    """
    prefix = scope_uri(root, request.scope) if request.scope else root.rstrip("/") + "/"
    entries, _ = await entries_under(storage, prefix, limit=10**9)
    now = datetime.now(UTC)
    chosen = [
        row(uri, entry) for uri, entry in entries if purge_selects(request, row(uri, entry), _age(entry, now))
    ]
    _require_match(request, chosen, prefix)
    if not request.dry_run:
        for found in chosen:
            await storage.for_uri(found.uri).delete(found.uri)
            await storage.for_uri(found.uri).delete(key_record_uri(found.uri))
    return CacheAdminResult(
        root=root,
        scope=request.scope,
        rows=chosen if request.dry_run else [],
        purged=0 if request.dry_run else len(chosen),
        dry_run=request.dry_run,
    )


def _age(entry: CacheEntry | Damaged, now: datetime) -> float:
    return (now - entry.created_at).total_seconds() if isinstance(entry, CacheEntry) else 0.0


def _require_match(request: CacheAdminInput, chosen: list[CacheRow], prefix: str) -> None:
    """A purge that names a key or a run must find it, and a key prefix must name one entry."""
    what = f"--key {request.key}" if request.key else f"--run {request.run}" if request.run else ""
    if request.run and request.state:
        what += f" --state {request.state}"
    if what and not chosen:
        raise ConfigurationError(
            f"cache purge {what}: no entry under {prefix} matches (hint: `npaflow cache list` shows "
            "the keys and the runs that wrote them)"
        )
    keys = sorted({found.key for found in chosen})
    if request.key and len(keys) > 1:
        shown = ", ".join(key[:19] for key in keys[:5]) + (" …" if len(keys) > 5 else "")
        raise ConfigurationError(
            f"cache purge --key {request.key}: matches {len(keys)} entries ({shown}); give more hex digits"
        )


async def administer(storage: StorageRouter, default_root: str, request: CacheAdminInput) -> CacheAdminResult:
    """Carry out one `npaflow cache` request."""
    root = request.root.rstrip("/") or default_root
    if request.action is CacheAction.EXPLAIN:
        return CacheAdminResult(root=root, explanation=await explain(storage, request))
    if request.action is CacheAction.PURGE:
        return await purge(storage, root, request)
    prefix = scope_uri(root, request.scope) if request.scope else root + "/"
    entries, more = await entries_under(storage, prefix, MAX_LISTED_ENTRIES)
    rows = sorted((row(uri, entry) for uri, entry in entries), key=lambda r: r.created_at, reverse=True)
    return CacheAdminResult(root=root, scope=request.scope, rows=rows, truncated=more)

"""`read_items`, `write_members`, `diff_items`: a fan-out's list read once and kept, its members' standing.

The list is read from its source once per run: checked (npaflow/fanout/items.py),
then copied into the ledger (`<ledger>/fanout/<group>-<n>/items.json`) with its
digest. Continue-as-new and `resume` read that copy, so the members they expand
are the ones the run began with; `resume --reread-items` reads the source again
and says what changed. `resume` also learns from `members.json` which members
an earlier execution finished, so only the others launch. `diff_items` shows,
before such a restart, what reading each source again would change.
"""

from __future__ import annotations

import json

import structlog
from temporalio import activity

from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.ledger import read_ledger
from activities.storage import ArtifactMissingError, ArtifactTooLargeError, NotARegularFileError, NotTextError
from activities.tracing import tag_span
from npaflow.document.for_each import MAX_ITEMS_CEILING
from npaflow.errors import ConfigurationError
from npaflow.fanout import (
    FanOutRecord,
    ItemsError,
    ItemsRead,
    MemberRow,
    MembersDocument,
    MemberStatus,
    list_digest,
    member_key,
    parsed_items,
)
from npaflow.fanout.changes import DiffItemsInput, ItemsChange, ItemsChanges
from npaflow.fanout.items import MAX_LIST_BYTES, canonical
from npaflow.fanout.models import ReadItemsInput, WriteMembersInput
from npaflow.runtime.contract import DIFF_ITEMS, READ_ITEMS, WRITE_MEMBERS, ledger_file_uri
from npaflow.runtime.ledger_layout import FANOUT_DIR

log = structlog.get_logger(__name__)


class FanOutActivities:
    """The fan-out's reads and writes, through the worker's storage."""

    def __init__(self, context: ActivityContext) -> None:
        self.storage = context.storage

    @activity.defn(name=READ_ITEMS.name)
    @mapped_errors
    async def read_items(self, request: ReadItemsInput) -> ItemsRead:
        """The list (the ledger's copy when there is one), checked, with the members already done."""
        ask = request.request
        tag_span(run_id=request.run_id, group=ask.group)
        folder = f"{FANOUT_DIR}/{ask.group}-{ask.occurrence}"
        copy_uri = ledger_file_uri(request.ledger_uri, f"{folder}/items.json") if request.ledger_uri else ""
        members_uri = (
            ledger_file_uri(request.ledger_uri, f"{folder}/members.json") if request.ledger_uri else ""
        )
        kept = await self._text(copy_uri, ask.max_items, missing_ok=True) if copy_uri else None
        note = ""
        if kept is not None and not request.reread:
            items, etag = parsed_items(kept, uri=copy_uri, max_items=ask.max_items), "ledger copy"
            note = f"read from the run's copy {copy_uri}"
        else:
            text = await self._text(ask.uri, ask.max_items, missing_ok=False)
            assert text is not None
            items = parsed_items(text, uri=ask.uri, max_items=ask.max_items)
            etag = await self.storage.for_uri(ask.uri).version(ask.uri) or ""
            if kept is not None:
                before = parsed_items(kept, uri=copy_uri, max_items=ask.max_items)
                note = ItemsChange.between(ask.group, ask.occurrence, ask.uri, before, items).note()
            if copy_uri:
                await self.storage.for_uri(copy_uri).write_text(copy_uri, canonical(items))
        done = await self._done(members_uri) if request.resuming else ()
        keys = {member_key(item) for item in items}
        log.info("fanout.read", run_id=request.run_id, group=ask.group, items=len(items), done=len(done))
        return ItemsRead(
            items=tuple(items),
            digest=list_digest(items),
            etag=etag,
            copy_uri=copy_uri,
            members_uri=members_uri,
            done=tuple(key for key in done if key in keys),
            note=note,
        )

    @activity.defn(name=WRITE_MEMBERS.name)
    @mapped_errors
    async def write_members(self, request: WriteMembersInput) -> None:
        """Write `members.json` where the run's later states and decisions can read it."""
        outcome = request.outcome
        kept = await self._text(request.copy_uri, outcome.count, missing_ok=False)
        assert kept is not None
        items = parsed_items(kept, uri=request.copy_uri, max_items=max(outcome.count, 1))
        statuses = outcome.statuses()
        rows = []
        for index, item in enumerate(items):
            key = member_key(item)
            status = statuses.get(key, MemberStatus.SUCCEEDED)
            rows.append(MemberRow(key=key, index=index, item=item, status=status))
        document = MembersDocument.of(outcome, rows)
        await self.storage.for_uri(request.uri).write_text(
            request.uri, document.model_dump_json(by_alias=True)
        )

    @activity.defn(name=DIFF_ITEMS.name)
    @mapped_errors
    async def diff_items(self, request: DiffItemsInput) -> ItemsChanges:
        """Each list the run read (its ledger copy) against its source now, for `resume --reread-items`.

        Raises:
            ConfigurationError: the run has no ledger there.
        """
        ledger = await read_ledger(self.storage, request.ledger_uri)
        if ledger is None:
            raise ConfigurationError(f"no ledger at {request.ledger_uri} (the run wrote none yet)")
        changes = [await self._change(record) for record in ledger.fan_outs.values() if record.copy_uri]
        return ItemsChanges(run_id=ledger.run_id, changes=changes)

    async def _change(self, record: FanOutRecord) -> ItemsChange:
        """One occurrence's copy against its source; a source that cannot be read says why."""
        kept = await self._text(record.copy_uri, MAX_ITEMS_CEILING, missing_ok=True)
        before = [] if kept is None else parsed_items(kept, uri=record.copy_uri, max_items=MAX_ITEMS_CEILING)
        try:
            text = await self._text(record.items_uri, MAX_ITEMS_CEILING, missing_ok=False)
            assert text is not None
            after = parsed_items(text, uri=record.items_uri, max_items=MAX_ITEMS_CEILING)
        except ItemsError as exc:
            return ItemsChange(
                group=record.group, occurrence=record.occurrence, items_uri=record.items_uri, error=str(exc)
            )
        return ItemsChange.between(record.group, record.occurrence, record.items_uri, before, after)

    async def _text(self, uri: str, max_items: int, *, missing_ok: bool) -> str | None:
        storage = self.storage.for_uri(uri)
        try:
            return await storage.read_text(uri, max_bytes=MAX_LIST_BYTES)
        except ArtifactMissingError:
            if missing_ok:
                return None
            raise ItemsError(
                f"forEach items {uri} does not exist: the state that writes the list must write it "
                "there before the group starts (check its outputs and the URI's tokens)"
            ) from None
        except ArtifactTooLargeError:
            raise ItemsError(
                f"forEach items {uri} is larger than {MAX_LIST_BYTES:,} bytes; keep each item "
                f"small (a path or an id), at most forEach.max {max_items:,} of them"
            ) from None
        except (NotARegularFileError, NotTextError) as exc:
            raise ItemsError(f"forEach items {uri}: {exc}; write the list as a UTF-8 JSON file") from None

    async def _done(self, uri: str) -> tuple[str, ...]:
        """The members an earlier execution finished, from its `members.json` (none when absent)."""
        if not uri:
            return ()
        try:
            text = await self.storage.for_uri(uri).read_text(uri, max_bytes=16 * MAX_LIST_BYTES)
        except ArtifactMissingError:
            return ()
        try:
            document = MembersDocument.model_validate(json.loads(text))
        except ValueError as exc:
            raise ItemsError(f"{uri} cannot be read ({exc}); remove it to rerun every member") from None
        return tuple(member.key for member in document.members if member.ok())

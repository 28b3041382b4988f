"""The executor's fan-out half: a group's list read once, its members' standing kept."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import is_cancelled_exception

from npaflow.errors import PayloadError
from npaflow.fanout import ItemsRead, ItemsRequest, MembersOutcome
from npaflow.fanout.models import FanOutRecord, ReadItemsInput, WriteMembersInput
from npaflow.runtime.contract import READ_ITEMS, WRITE_MEMBERS
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    PERSISTENT_RETRY,
    call,
    call_local,
    classify_activity_error,
)
from workflows_def.patches import MEMBER_OUTPUTS
from workflows_def.run.outputs import missing_outputs
from workflows_def.run_deps import RunDeps


class FanOutReads:
    """Reads each fan-out occurrence's list and records how its members stand."""

    def __init__(self, deps: RunDeps) -> None:
        self.request, self.loaded, self.state = deps.request, deps.loaded, deps.state
        self.resuming = not deps.request.continued and bool(deps.loaded.prior.latest())

    def _deadline(self) -> timedelta:
        return timedelta(seconds=max(300.0, self.request.transport_recovery_seconds))

    async def read_items(self, request: ItemsRequest) -> ItemsRead:
        """The list, checked and keyed; its digest goes to the ledger before any member launches.

        Raises:
            PayloadError: the list is missing, malformed or past `max` (named by index and field).
        """
        ask = ReadItemsInput(
            run_id=self.state.run_id,
            request=request,
            ledger_uri=self.loaded.ledger_uri,
            reread=self.request.reread_items,
            resuming=self.resuming,
        )
        try:
            read = await call_local(
                READ_ITEMS,
                ask,
                schedule_to_close_timeout=self._deadline(),
                retry_policy=PERSISTENT_RETRY,
                summary=f"read the items of {request.group} from {request.uri}",
            )
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            raise PayloadError(f"group {request.group}: {message}") from None
        self.state.add_fan_out(
            FanOutRecord.of_read(request.group, request.occurrence, read, items_uri=request.uri)
        )
        return read

    async def still_done(self, group: str, outputs: dict[str, list[str]]) -> set[str]:
        """Of the members an earlier execution finished, those whose declared outputs are all there.

        A resume trusts a member's `members.json` entry only as far as its outputs: one that
        lost an output runs again, as a plain wave whose output is gone does.

        Raises:
            OutputsUnreadableError: they could not be checked (never read as there or gone).
        """
        uris = sorted({uri for member in outputs.values() for uri in member})
        if not uris or not workflow.patched(MEMBER_OUTPUTS):
            return set(outputs)
        gone = set(await missing_outputs(self.request, None, uris, states=[group]))
        return {key for key, member in outputs.items() if gone.isdisjoint(member)}

    async def record_members(self, members: MembersOutcome, read: ItemsRead, *, ended: bool) -> None:
        """Write `members.json` (where a later state reads it) and the ledger's record."""
        self.state.add_fan_out(members.record(read, ended=ended))
        if not read.members_uri:
            return
        await call(
            WRITE_MEMBERS,
            WriteMembersInput(uri=read.members_uri, copy_uri=read.copy_uri, outcome=members),
            start_to_close_timeout=timedelta(minutes=2),
            schedule_to_close_timeout=self._deadline(),
            retry_policy=PERSISTENT_RETRY,
            summary=f"write members.json of {members.group}",
        )

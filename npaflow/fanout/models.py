"""What the walk asks of a fan-out's list, what it records of one, and `members.json`."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue

from npaflow.fanout.items import member_key
from npaflow.fanout.labels import item_label
from npaflow.presets import FROZEN

#: The schema of a group's `members.json`.
MEMBERS_SCHEMA = "npa.workflow.members.v1"
#: Failed members' keys `status` and the summary name per fan-out (members.json lists them all).
SHOWN_FAILURES = 20
#: Fan-out occurrences `status` and the summary show (the newest; the ledger keeps every one).
SHOWN_FAN_OUTS = 20


class ItemsRequest(BaseModel):
    """Read one occurrence of a fan-out group's list."""

    model_config = FROZEN

    group: str
    occurrence: int
    uri: str
    name: str
    max_items: int


class ItemsRead(BaseModel):
    """The list as read (or, planning without `--assume-items`, not known until run time)."""

    model_config = FROZEN

    known: bool = True
    items: tuple[JsonValue, ...] = ()
    digest: str = ""
    etag: str = ""
    #: The ledger's copy of the list: what `resume` and continue-as-new read, unless told to re-read.
    copy_uri: str = ""
    members_uri: str = ""
    #: Member keys an earlier execution of this run finished: `resume` relaunches only the rest.
    done: tuple[str, ...] = ()
    note: str = ""  # e.g. "read again (--reread-items): 2 items added, 1 removed"


class ReadItemsInput(BaseModel):
    """`read_items`: the list of one fan-out occurrence, kept in the run's ledger as it was read."""

    model_config = FROZEN

    run_id: str
    request: ItemsRequest
    ledger_uri: str  # the run prefix: the list's copy and `members.json` live under it
    reread: bool = False  # `resume --reread-items`: read the source again, not the ledger's copy
    resuming: bool = False  # a new execution of a run that ran before (not continue-as-new)


class MemberStatus(StrEnum):
    """How one member ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    NOT_RUN = "not_run"  # its batch never launched: the group stopped first
    EARLIER = "succeeded_earlier"  # an earlier execution of the run finished it (resume)


class MemberRow(BaseModel):
    """One member: its key, its place in the list as read, its item and how it ended."""

    model_config = FROZEN

    key: str
    index: int
    item: JsonValue
    status: MemberStatus

    def ok(self) -> bool:
        """True for a member whose work is done."""
        return self.status in (MemberStatus.SUCCEEDED, MemberStatus.EARLIER)


def members_badge(succeeded: int, count: int, failed: int, not_run: int) -> str:
    """`6/7 ok · 1 failed · 2 not run` (the parts that are not zero after the first)."""
    parts = [f"{succeeded}/{count} ok"]
    parts += [f"{failed} failed"] if failed else []
    parts += [f"{not_run} not run"] if not_run else []
    return " · ".join(parts)


def widest_badge(max_items: int) -> str:
    """The widest badge a group of at most `max_items` members draws (the page sizes its box by it)."""
    return members_badge(max_items, max_items, max_items, max_items)


class FanOutRecord(BaseModel):
    """A fan-out occurrence in the ledger: the list's identity and how its members ended."""

    model_config = FROZEN

    group: str
    occurrence: int
    items_uri: str
    digest: str = ""
    etag: str = ""
    copy_uri: str = ""
    members_uri: str = ""
    count: int = 0
    min_success: float = 1.0
    succeeded: int = 0
    failed: list[str] = Field(default_factory=list)  # member keys
    failed_items: list[str] = Field(default_factory=list)  # the same members by item (labels.py)
    failing: int = 0  # while it runs: members failed so far (named once it ends)
    not_run: int = 0
    ended: bool = False
    note: str = ""

    @property
    def key(self) -> str:
        """Its key in the ledger: `group#occurrence`."""
        return f"{self.group}#{self.occurrence}"

    @classmethod
    def of_read(cls, group: str, occurrence: int, read: ItemsRead, *, items_uri: str) -> FanOutRecord:
        """An occurrence as its list was read, before any member ended."""
        return cls(
            group=group,
            occurrence=occurrence,
            items_uri=items_uri,
            digest=read.digest,
            etag=read.etag,
            copy_uri=read.copy_uri,
            members_uri=read.members_uri,
            count=len(read.items),
            note=read.note,
        )

    def shown(self) -> FanOutRecord:
        """The record as status and the summary carry it: at most SHOWN_FAILURES failed keys."""
        shown = {"failed": self.failed[:SHOWN_FAILURES], "failed_items": self.failed_items[:SHOWN_FAILURES]}
        return self.model_copy(update=shown)

    def badge(self) -> str:
        """What the run page draws on the group: `7 items`, then `3/7 ok · 1 failed` as batches end."""
        if not self.ended and not (self.succeeded or self.failing):
            return f"{self.count} items"
        if not self.ended:  # counted after each batch while it runs
            return members_badge(self.succeeded, self.count, self.failing, 0)
        failed = self.count - self.succeeded - self.not_run
        return members_badge(self.succeeded, self.count, failed, self.not_run)

    def text(self, *, run_open: bool = True, stopped: str = "") -> str:
        """`fan-out work: 6 of 7 members succeeded (minSuccess 0.8); failed: k1; members: URI`.

        `stopped`: the open run's phase when it moves nothing now (`suspended`, `paused`).
        """
        if not self.ended:
            how = (stopped or "running") if run_open else "the run ended before the group did"
            if self.succeeded or self.failing:
                how += f": {self.succeeded} of {self.count} succeeded"
                how += f", {self.failing} failed" if self.failing else ""
                how += " so far" if run_open else ""
            return f"fan-out {self.group}: {self.count} items from {self.items_uri} ({how})"
        failed = self.count - self.succeeded - self.not_run
        text = f"fan-out {self.group}: {self.succeeded} of {self.count} members succeeded"
        text += f" (minSuccess {self.min_success:g})" if self.min_success < 1 else ""
        if failed:
            more = f" and {failed - len(self.failed)} more" if failed > len(self.failed) else ""
            named = self.failed_items if len(self.failed_items) == len(self.failed) else self.failed
            text += f"; failed: {', '.join(named)}{more}"
        text += f"; {self.not_run} not run" if self.not_run else ""
        text += f"; list {self.note}" if self.note.startswith("read again") else ""
        return text + (f"; members: {self.members_uri}" if self.members_uri else "")


class MembersOutcome(BaseModel):
    """How a fan-out occurrence's members ended, by key: what the walk hands its executor."""

    model_config = FROZEN

    group: str
    occurrence: int
    items_uri: str
    digest: str
    min_success: float
    count: int
    failed: list[str] = Field(default_factory=list)
    not_run: list[str] = Field(default_factory=list)
    earlier: list[str] = Field(default_factory=list)  # finished by an earlier execution (resume)

    @property
    def succeeded(self) -> int:
        """Members whose work is done (this execution's and earlier ones')."""
        return self.count - len(self.failed) - len(self.not_run)

    def statuses(self) -> dict[str, MemberStatus]:
        """Each member that did not plainly succeed, by key (any other key succeeded)."""
        return {
            **dict.fromkeys(self.earlier, MemberStatus.EARLIER),
            **dict.fromkeys(self.not_run, MemberStatus.NOT_RUN),
            **dict.fromkeys(self.failed, MemberStatus.FAILED),
        }

    def record(self, read: ItemsRead, *, ended: bool) -> FanOutRecord:
        """The ledger's record of this occurrence once its members stand as they do."""
        read_as = FanOutRecord.of_read(self.group, self.occurrence, read, items_uri=self.items_uri)
        return read_as.model_copy(
            update={
                "count": self.count,
                "min_success": self.min_success,
                "succeeded": self.succeeded,
                "failed": self.failed,
                "failed_items": _labels(read.items, self.failed) if self.failed else [],
                "not_run": len(self.not_run),
                "ended": ended,
            }
        )


def _labels(items: tuple[JsonValue, ...], keys: list[str]) -> list[str]:
    """The members of `keys` by item; a key whose item is not at hand keeps the key."""
    by_key = {member_key(item): item_label(item) for item in items}
    return [by_key.get(key) or key for key in keys]


class WriteMembersInput(BaseModel):
    """`write_members`: a fan-out's `members.json`, built beside the list's ledger copy.

    Only the members that did not plainly succeed travel (the list itself is
    already in the ledger), so the payload stays small however wide the group.
    """

    model_config = FROZEN

    uri: str
    copy_uri: str
    outcome: MembersOutcome


class MembersDocument(BaseModel):
    """`members.json`: which members succeeded, for a decision or a later state to read."""

    model_config = FROZEN

    schema_: str = Field(default=MEMBERS_SCHEMA, alias="schema")
    group: str
    occurrence: int
    items_uri: str
    digest: str
    min_success: float
    succeeded: int
    failed: int
    members: list[MemberRow]

    @classmethod
    def of(cls, outcome: MembersOutcome, rows: list[MemberRow]) -> MembersDocument:
        """The document of an outcome, its rows the list's items in order."""
        return cls(
            group=outcome.group,
            occurrence=outcome.occurrence,
            items_uri=outcome.items_uri,
            digest=outcome.digest,
            min_success=outcome.min_success,
            succeeded=outcome.succeeded,
            failed=len(outcome.failed),
            members=rows,
        )

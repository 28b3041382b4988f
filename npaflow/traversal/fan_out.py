"""A `forEach:` group's walk: its list read once, a member per item, batched as any group is.

Every member is built (its item tokens resolved) before the first batch
launches, so an item missing a field the template uses launches nothing. A
failed batch does not stop the group while `minSuccess` can still hold; the
group then records `members.json` and fails or succeeds by its verdict.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import JsonValue

from npaflow.context import RunContext
from npaflow.document.models import State, WorkflowSpec
from npaflow.fanout import (
    ItemsError,
    ItemsRead,
    ItemsRequest,
    MemberRow,
    MembersOutcome,
    MemberStatus,
    allowed_failures,
    check_claims,
    group_error,
    item_label,
    member_key,
    member_state,
)
from npaflow.steps import PlanStep, StepPlacement, WalkTokens
from npaflow.tokens import resolve_text
from npaflow.traversal.models import Executor, FanOutMark, Wave
from npaflow.traversal.reads import WalkReads
from npaflow.traversal.record import WalkRecord
from npaflow.traversal.wave_building import batch_wave, group_concurrency
from npaflow.waves import split_into_batches, states_where


class FanOutHost(Protocol):
    """What a fan-out's walk uses of the walk it is part of (npaflow/traversal/walk.py's `Walker`)."""

    spec: WorkflowSpec
    context: RunContext
    executor: Executor
    tokens: WalkTokens
    reads: WalkReads
    record: WalkRecord
    sequence: int
    occurrences: int
    cap: int

    def materialize(self, state: State, placement: StepPlacement) -> PlanStep:
        """The step of `state` here, its tokens resolved against the walk so far (and recorded)."""
        ...

    def resolved(self, state: State, placement: StepPlacement) -> PlanStep:
        """The same step, not recorded (a member an earlier execution finished)."""
        ...


class FanOutWalk:
    """One occurrence of a fan-out group, walked by `walker`."""

    def __init__(self, walker: FanOutHost, group: State) -> None:
        assert group.for_each is not None
        self.walker, self.group, self.fan = walker, group, group.for_each
        self.template = walker.spec.states[group.parallel[0]]
        self.placement = StepPlacement(loop_label=group.name, group=group.name)
        self.status: dict[str, MemberStatus] = {}
        self.first_error = ""  # the first failed batch's own error: why the group failed

    async def run(self) -> str:
        """Walk the group; return its error ("" when it succeeded under `minSuccess`)."""
        walker = self.walker
        uri = resolve_text(self.fan.items, walker.reads.state_scope(self.group))
        walker.occurrences += 1
        request = ItemsRequest(
            group=self.group.name,
            occurrence=walker.occurrences,
            uri=uri,
            name=self.fan.name,
            max_items=self.fan.max_items,
        )
        read = await walker.executor.read_items(request)
        symbolic = f"<members.json of {self.group.name}>"  # a plan's, and what a cache key sees
        members_uri = read.members_uri or symbolic
        walker.tokens.outputs[self.group.name] = {"uri": members_uri, "members": members_uri}
        walker.tokens.keyed_outputs[self.group.name] = {"uri": symbolic, "members": symbolic}
        if not read.known:
            await self._template_only(uri)
            return ""
        steps = await self._members(read, uri)
        await self._batches(steps, FanOutMark(items_uri=uri, count=len(read.items)), len(read.items))
        rows = self._rows(read)
        by_status = {status: [row.key for row in rows if row.status is status] for status in MemberStatus}
        outcome = MembersOutcome(
            group=self.group.name,
            occurrence=request.occurrence,
            items_uri=uri,
            digest=read.digest,
            min_success=self.fan.min_success,
            count=len(rows),
            failed=by_status[MemberStatus.FAILED],
            not_run=by_status[MemberStatus.NOT_RUN],
            earlier=by_status[MemberStatus.EARLIER],
        )
        await walker.executor.record_members(outcome, read, ended=True)
        return group_error(self.group.name, rows, self.fan.min_success, self.template.name, self.first_error)

    async def _members(self, read: ItemsRead, uri: str) -> list[PlanStep]:
        """Every member still to run (those an earlier execution finished stay out), built now."""
        steps: list[PlanStep] = []
        claims: list[tuple[int, list[str]]] = []
        try:
            done = await self._still_done(read)
            for index, item in enumerate(read.items):
                key = member_key(item)
                if key in done:
                    self.status[key] = MemberStatus.EARLIER
                    continue
                steps.append(self.walker.materialize(*self._member(index, item)))
                claims.append((index, [artifact.uri for artifact in steps[-1].outputs]))
            check_claims(claims, [artifact.uri for artifact in self.template.outputs])
        except ItemsError as exc:
            raise ItemsError(f"group {self.group.name}: forEach items {uri}: {exc}") from None
        return steps

    async def _still_done(self, read: ItemsRead) -> set[str]:
        """The members an earlier execution finished whose declared outputs are all still there."""
        outputs: dict[str, list[str]] = {}
        for index, item in enumerate(read.items):
            if member_key(item) in read.done:
                step = self.walker.resolved(*self._member(index, item))
                outputs[step.item] = [artifact.uri for artifact in step.outputs]
        return await self.walker.executor.still_done(self.group.name, outputs) if outputs else set()

    def _member(self, index: int, item: JsonValue) -> tuple[State, StepPlacement]:
        """The member of `item`: the template with the item's tokens, placed as its own step."""
        key = member_key(item)
        state = member_state(self.template, self.fan.name, item, index)
        return state, self.placement.model_copy(update={"item": key, "item_label": item_label(item)})

    async def _batches(self, steps: list[PlanStep], mark: FanOutMark, total: int) -> None:
        walker = self.walker
        concurrency = group_concurrency(self.group, len(steps), walker.context.config)
        batches = split_into_batches(steps, concurrency, walker.cap)
        allowed, failed = allowed_failures(total, self.fan.min_success), 0
        succeeded = total - len(steps)  # an earlier execution finished the others
        for index, batch in enumerate(batches, start=1):
            if failed > allowed:  # the verdict is decided: what is left launches nothing
                walker.record.skipped.extend(batch)
                continue
            walker.sequence += 1
            wave = batch_wave(
                self.group.name,
                tuple(batch),
                sequence=walker.sequence,
                occurrence=walker.occurrences,
                batch=(index, len(batches)),
                concurrency=concurrency,
                fan_out=mark,
            )
            walker.record.waves.append(wave)
            outcome = await walker.executor.run_wave(wave)
            bad = set() if outcome.succeeded else set(outcome.failed_items or (s.item for s in batch))
            if not (outcome.succeeded or self.first_error):
                self.first_error = f"batch {index} of {len(batches)}: {_without_where(outcome.error, wave)}"
            for step in batch:
                self.status[step.item] = MemberStatus.FAILED if step.item in bad else MemberStatus.SUCCEEDED
            failed += len(bad)
            succeeded += len(batch) - len(bad)
            walker.executor.members_progressed(f"{self.group.name}#{walker.occurrences}", succeeded, failed)

    async def _template_only(self, uri: str) -> None:
        """Planned without the list: one batch of the template, its item tokens as written."""
        walker = self.walker
        step = walker.materialize(self.template, self.placement)
        walker.sequence += 1
        wave = batch_wave(
            self.group.name,
            (step,),
            sequence=walker.sequence,
            occurrence=walker.occurrences,
            batch=(1, 1),
            concurrency=group_concurrency(self.group, 1, walker.context.config),
            fan_out=FanOutMark(items_uri=uri, count=self.fan.max_items, known=False),
        )
        walker.record.waves.append(wave)
        await walker.executor.run_wave(wave)

    def _rows(self, read: ItemsRead) -> list[MemberRow]:
        rows = []
        for index, item in enumerate(read.items):
            key = member_key(item)
            status = self.status.get(key, MemberStatus.NOT_RUN)
            rows.append(MemberRow(key=key, index=index, item=item, status=status))
        return rows


def _without_where(error: str, wave: Wave) -> str:
    """A batch's error without where it happened: its wave key, or its states one per member (long)."""
    items = [step.item_label for step in wave.steps]
    for where in (f"wave {wave.key}: ", f"state {states_where(wave.states, items)}: "):
        error = error.removeprefix(where)
    return error

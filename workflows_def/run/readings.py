"""Reads that steer the walk: decision artifacts and trigger prefixes (the executor's base).

Decisions an earlier execution already took replay from the ledger; a read that
fails is recorded in the ledger with its cause and fails the run naming the
state and the URI, never read as "missing".
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import is_cancelled_exception

from npaflow.decisions import normalize_decision
from npaflow.errors import PayloadError
from npaflow.runtime.contract import READ_DECISION, WAIT_TRIGGER
from npaflow.runtime.ledger import DecisionRecord
from npaflow.runtime.messages import ReadDecisionInput, WaitTriggerInput
from npaflow.runtime.metrics import Metric
from npaflow.runtime.vocabulary import DecisionSource
from npaflow.traversal import DecisionRequest, TriggerRequest
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    PERSISTENT_RETRY,
    POLL_HEARTBEAT_TIMEOUT,
    call,
    call_local,
    classify_activity_error,
    now,
    queue_for,
    wait_timeout,
)
from workflows_def.metrics import count
from workflows_def.run_deps import RunDeps


class ArtifactReads:
    """`read_decision` and `wait_trigger` of the executor protocol, through activities."""

    def __init__(self, deps: RunDeps) -> None:
        self.request = deps.request
        self.loaded = deps.loaded
        self.state = deps.state
        self.recorder = deps.recorder
        self.prior_decisions = list(deps.loaded.prior.decisions)

    async def read_decision(self, request: DecisionRequest) -> str:
        """Read a decision artifact; the explicit assumption is only a missing-artifact fallback.

        Decisions an earlier execution of this run already took are replayed from the
        ledger in order, so the walk retraces its path even if an artifact was overwritten.
        """
        if self.prior_decisions:
            head = self.prior_decisions[0]
            if (
                (head.state, head.uri) == (request.state, request.uri)
                and head.decision
                and not head.decode_error
            ):
                self.prior_decisions.pop(0)
                return head.decision
            self.prior_decisions.clear()  # the walk diverged: read everything fresh from here
        try:
            result = await call_local(
                READ_DECISION,
                ReadDecisionInput(
                    state=request.state, uri=request.uri, fallback=self.request.assume_decision
                ),
                schedule_to_close_timeout=timedelta(
                    seconds=max(300.0, self.request.transport_recovery_seconds)
                ),
                retry_policy=PERSISTENT_RETRY,
                summary=f"read decision of {request.state} from {request.uri}",
            )
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            self._took(
                DecisionRecord(
                    state=request.state,
                    uri=request.uri,
                    read_at=now(),
                    source=DecisionSource.ERROR,
                    decode_error=message[:200],
                )
            )
            raise PayloadError(
                f"state {request.state}: cannot read decision artifact {request.uri}: {message}"
            ) from None
        self._took(result.record)
        if result.error:
            raise PayloadError(result.error)
        return result.decision

    async def assume_decision(self, request: DecisionRequest) -> str:
        """A state with no decision source: the explicit assumption decides, recorded as such.

        Runs refuse such states at load unless --assume-decision was given, so "" (the
        walker's planning default) is only seen replaying a run that predates the rule.
        """
        assumed = normalize_decision(self.request.assume_decision)
        if not assumed:
            return ""
        head = self.prior_decisions[0] if self.prior_decisions else None
        if head is not None and (head.state, head.uri) == (request.state, ""):
            self.prior_decisions.pop(0)
            if head.decision == assumed:
                return assumed  # taken by an earlier execution: the run's decisions hold it already
        self._took(
            DecisionRecord(
                state=request.state, uri="", decision=assumed, read_at=now(), source=DecisionSource.ASSUMED
            )
        )
        return assumed

    def _took(self, record: DecisionRecord) -> None:
        """Record a decision the walk took (or failed to take), and count it by source."""
        self.state.add_decision(record)
        count(Metric.DECISION_READS, source=record.source.value)

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Wait for the prefix unless this state's watermark already fired."""
        known = self.state.watermarks.get(request.state) or self.loaded.prior.watermarks.get(request.state)
        if known is not None and known.objects >= request.trigger.min_objects:
            return
        self.state.trigger_waiting(request.state)
        await self.recorder.sync()
        result = await call(
            WAIT_TRIGGER,
            WaitTriggerInput(
                state=request.state,
                uri=request.uri,
                trigger=request.trigger,
                max_wait_seconds=self.request.max_wait_seconds,
            ),
            task_queue=queue_for(WAIT_TRIGGER),
            start_to_close_timeout=wait_timeout(self.request.max_wait_seconds),
            heartbeat_timeout=POLL_HEARTBEAT_TIMEOUT,
            retry_policy=PERSISTENT_RETRY,
            summary=f"wait for {request.uri} ({request.state})",
        )
        if result.error or result.watermark is None:
            raise PayloadError(result.error or f"state {request.state}: trigger gave up")
        self.state.add_watermark(request.state, result.watermark)

"""Activities that read the world to steer a run: decisions, trigger prefixes, declared outputs.

Fail closed: only a definite "no such object" is missing (and only then may a
fallback decision apply); access and credential errors fail at once, other
read errors are retried by the caller's deadline, never read as missing.
"""

from __future__ import annotations

import asyncio
import json
import time

from temporalio import activity

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import heartbeating, resume_details
from activities.ledger import read_ledger
from activities.storage import (
    MAX_DECISION_BYTES,
    ArtifactMissingError,
    ArtifactTooLargeError,
    NotARegularFileError,
    NotTextError,
    has_content,
    join_uri,
)
from npaflow.decisions import DECISION_KEYS, normalize_decision, parse_decision_payload
from npaflow.errors import ConfigurationError, PayloadError
from npaflow.runtime.contract import (
    CHECK_OUTPUTS,
    LIST_ARTIFACTS,
    READ_DECISION,
    READ_RUN_WAVES,
    WAIT_TRIGGER,
)
from npaflow.runtime.ledger import DecisionRecord, RuntimeLedger, Watermark, latest_attempts
from npaflow.runtime.messages import (
    CheckOutputsInput,
    CheckOutputsResult,
    DecisionResult,
    ReadDecisionInput,
    TriggerResult,
    WaitTriggerInput,
)
from npaflow.runtime.reads import ArtifactRow, ListArtifactsInput, RunArtifacts, RunWaves, RunWavesInput
from npaflow.runtime.status_pages import wave_page
from npaflow.runtime.summary import WaveView
from npaflow.runtime.vocabulary import DecisionSource, HeartbeatPhase

#: Decision bodies kept in the ledger are cut to this many characters.
MAX_BODY_CHARS = 2000


class ArtifactActivities:
    """Reads decision artifacts, waits on trigger prefixes, checks declared outputs."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=READ_DECISION.name)
    @mapped_errors
    async def read_decision(self, request: ReadDecisionInput) -> DecisionResult:
        """Read and normalize a decision; a missing artifact falls back only when asked to."""
        storage = self.context.storage.for_uri(request.uri)
        try:
            body = await storage.read_text(request.uri, max_bytes=MAX_DECISION_BYTES)
        except (ArtifactTooLargeError, NotARegularFileError, NotTextError) as exc:
            record = DecisionRecord(
                state=request.state,
                uri=request.uri,
                read_at=utc_now(),
                source=DecisionSource.ARTIFACT,
                decode_error=str(exc)[:200],
            )
            return DecisionResult(record=record, error=f"state {request.state}: malformed decision: {exc}")
        except ArtifactMissingError:
            if request.fallback:
                decision = normalize_decision(request.fallback)
                return DecisionResult(
                    decision=decision,
                    record=DecisionRecord(
                        state=request.state,
                        uri=request.uri,
                        decision=decision,
                        read_at=utc_now(),
                        source=DecisionSource.FALLBACK,
                    ),
                )
            record = DecisionRecord(
                state=request.state, uri=request.uri, read_at=utc_now(), source=DecisionSource.MISSING
            )
            return DecisionResult(
                record=record,
                error=(
                    f"state {request.state}: decision artifact {request.uri} does not exist; the state "
                    "must write it, or pass an explicit --assume-decision to fall back"
                ),
            )
        record = DecisionRecord(
            state=request.state,
            uri=request.uri,
            read_at=utc_now(),
            body=body[:MAX_BODY_CHARS],
            source=DecisionSource.ARTIFACT,
        )
        try:
            decision = parse_decision_payload(body, request.uri)
        except PayloadError as exc:
            record.decode_error = str(exc)[:200]
            return DecisionResult(record=record, error=f"state {request.state}: {exc}")
        if not decision:
            return _empty_decision(request, record)
        record.decision = _ledger_decision(body) or decision
        return DecisionResult(decision=decision, record=record)

    @activity.defn(name=WAIT_TRIGGER.name)
    @mapped_errors
    async def wait_trigger(self, request: WaitTriggerInput) -> TriggerResult:
        """List the prefix (all pages) until it holds enough objects, within maxPolls and the deadline."""
        trigger, uri = request.trigger, request.uri
        storage = self.context.storage.for_uri(uri)
        prefix = uri if uri.endswith("/") else uri + "/"
        details = resume_details(phase=HeartbeatPhase.WAITING)
        deadline = request.max_wait_seconds if request.max_wait_seconds > 0 else float("inf")
        async with heartbeating(details) as hb:
            while True:
                keys = await hb.recovering(
                    f"state {request.state}: list {uri}",
                    lambda: storage.list_keys(prefix),
                    deadline_seconds=deadline,
                )
                polls = hb.details.polls + 1
                hb.update(polls=polls, objects=len(keys))
                if len(keys) >= trigger.min_objects:
                    return TriggerResult(
                        watermark=Watermark(
                            uri=uri,
                            objects=len(keys),
                            polls=polls,
                            observed_at=utc_now(),
                            sample=[join_uri(uri, k) for k in keys[:5]],
                        )
                    )
                if trigger.max_polls > 0 and polls >= trigger.max_polls:
                    return TriggerResult(
                        error=f"state {request.state}: trigger {uri} still has "
                        f"{len(keys)} object(s) after {polls} poll(s) (need "
                        f"{trigger.min_objects})"
                    )
                if time.time() - hb.details.started_at >= deadline:
                    return TriggerResult(
                        error=f"state {request.state}: trigger {uri} still has "
                        f"{len(keys)} object(s) (need {trigger.min_objects}) after "
                        f"waiting {request.max_wait_seconds:g}s"
                    )
                await asyncio.sleep(max(trigger.poll_seconds, 0.05))

    @activity.defn(name=CHECK_OUTPUTS.name)
    @mapped_errors
    async def check_outputs(self, request: CheckOutputsInput) -> CheckOutputsResult:
        """Return the declared outputs that definitely do not exist (or are empty)."""
        missing = []
        for uri in request.uris:
            if not await has_content(self.context.storage.for_uri(uri), uri):
                missing.append(uri)
        return CheckOutputsResult(missing=missing)


def _empty_decision(request: ReadDecisionInput, record: DecisionRecord) -> DecisionResult:
    """An artifact whose decision is empty decided nothing: only an explicit assumption stands in.

    (The reference fills in its default assumption, `loop_back` when the spec branches,
    so a job that wrote `{"decision": ""}` silently took the loop-back path.)
    """
    if request.fallback:
        record.decision = normalize_decision(request.fallback)
        record.source = DecisionSource.FALLBACK
        return DecisionResult(decision=record.decision, record=record)
    record.decode_error = "the decision is empty"
    return DecisionResult(
        record=record,
        error=(
            f"state {request.state}: decision artifact {request.uri} gives an empty decision; the state "
            "must write one (promote_checkpoint or loop_back), or pass an explicit --assume-decision "
            "to fall back"
        ),
    )


def _ledger_decision(body: str) -> str:
    """The ledger copy reads `decision` or `last_decision` only (reference §7.4)."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(payload, dict):
        return ""
    for key in DECISION_KEYS[:2]:
        if key in payload:
            return normalize_decision(str(payload[key] or ""))
    return ""


class RunArtifactActivities:
    """A run's ledger, read for the CLI.

    `list_artifacts`: what a run produced and read, checked where storage is;
    `read_run_waves`: the jobs it launched, for the logs of an ended run.
    """

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    async def _ledger(self, ledger_uri: str) -> RuntimeLedger:
        ledger = await read_ledger(self.context.storage, ledger_uri)
        if ledger is None:
            raise ConfigurationError(f"no ledger at {ledger_uri} (the run wrote none yet)")
        return ledger

    @activity.defn(name=READ_RUN_WAVES.name)
    @mapped_errors
    async def read_run_waves(self, request: RunWavesInput) -> RunWaves:
        """Every attempt that launched a job, in the ledger's order; or one page of every attempt.

        Raises:
            ConfigurationError: the run has no ledger there.
        """
        ledger = await self._ledger(request.ledger_uri)
        if request.before is not None:
            waves, start = wave_page(ledger.waves, request.before)
            return RunWaves(waves=waves, start=start)
        return RunWaves(waves=[WaveView.of(record) for record in ledger.waves if record.job_id])

    @activity.defn(name=LIST_ARTIFACTS.name)
    @mapped_errors
    async def list_artifacts(self, request: ListArtifactsInput) -> RunArtifacts:
        """Each wave's declared outputs (do they exist now?), the decisions read, the triggers' objects.

        Raises:
            ConfigurationError: the run has no ledger there.
        """
        ledger = await self._ledger(request.ledger_uri)
        rows = []
        for wave in latest_attempts(ledger.waves).values():
            for index, member in enumerate(wave.key.members):
                if request.state and member.state != request.state:
                    continue
                planned = wave.planned[index].outputs if index < len(wave.planned) else wave.outputs
                step = (member.state, member.item)
                served = next((c for c in wave.cache if c.hit and (c.state, c.item) == step), None)
                for output in planned:
                    storage = self.context.storage.for_uri(output.uri)
                    rows.append(
                        ArtifactRow(
                            kind="output",
                            state=member.state,
                            uri=output.uri,
                            wave_key=str(wave.key),
                            attempt=wave.attempt,
                            item=wave.items[index] if index < len(wave.items) else "",
                            schema_label=output.schema_label,
                            exists=await has_content(storage, output.uri),
                            detail=f"from the cache: run {served.source_run} job {served.source_job}"
                            if served
                            else "",
                        )
                    )
        for decision in ledger.decisions:
            if request.state and decision.state != request.state:
                continue
            read = decision.source is DecisionSource.ARTIFACT
            exists = (
                await has_content(self.context.storage.for_uri(decision.uri), decision.uri) if read else None
            )
            detail = f"{decision.decision or '(none)'} ({decision.source.value})"
            rows.append(
                ArtifactRow(
                    kind="decision", state=decision.state, uri=decision.uri, exists=exists, detail=detail
                )
            )
        for state, mark in ledger.watermarks.items():
            if not request.state or state == request.state:
                detail = f"{mark.objects} objects after {mark.polls} polls; first: {', '.join(mark.sample)}"
                rows.append(ArtifactRow(kind="trigger", state=state, uri=mark.uri, detail=detail))
        return RunArtifacts(run_id=ledger.run_id, rows=rows)

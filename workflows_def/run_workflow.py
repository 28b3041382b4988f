"""`NpaWorkflowRun`: one Temporal workflow per run; walks the spec with the Temporal executor."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pydantic
from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate
from temporalio.exceptions import ApplicationError, is_cancelled_exception

from npaflow.context import build_run_context
from npaflow.decisions import resolve_assumption
from npaflow.document.models import ExecutionMode
from npaflow.errors import NpaflowError
from npaflow.runtime.contract import (
    EXPORT_LEDGER,
    LOAD_SPEC,
    REQUEST_CANCEL,
    STATUS_QUERY,
    WORKFLOW_TYPE,
    ErrorType,
    SearchAttribute,
    Signal,
)
from npaflow.runtime.ledger import LedgerStatus
from npaflow.runtime.messages import ExportLedgerInput, LoadedSpec, LoadSpecInput, RequestCancelInput
from npaflow.runtime.request import RunRequest
from npaflow.runtime.run_state import RunState
from npaflow.runtime.summary import RunStatusView, RunSummary
from npaflow.runtime.ui_text import current_details
from npaflow.traversal import Walker
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    LEDGER_EXPORT_DEADLINE,
    LEDGER_RETRY,
    SHORT_RETRY,
    call,
    call_local,
    classify_activity_error,
    is_activity_failure,
)
from workflows_def.executor import TemporalExecutor

#: The run phase, so suspended or paused runs can be found with no worker up.
PHASE_ATTRIBUTE = SearchAttributeKey.for_keyword(SearchAttribute.PHASE.value)
#: The spec's name, to list every run of one workflow.
WORKFLOW_ATTRIBUTE = SearchAttributeKey.for_keyword(SearchAttribute.WORKFLOW.value)
#: The states running now, to find the runs sitting in one state.
STATE_ATTRIBUTE = SearchAttributeKey.for_keyword_list(SearchAttribute.STATE.value)
#: Every search attribute the run upserts (registered by the worker and `npaflow dev`).
SEARCH_ATTRIBUTE_KEYS: tuple[SearchAttributeKey[Any], ...] = (
    PHASE_ATTRIBUTE,
    WORKFLOW_ATTRIBUTE,
    STATE_ATTRIBUTE,
)


class RunRecorder:
    """What a run records outside itself: ledger deltas, search attributes, memo, UI details."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.loaded: LoadedSpec | None = None
        self._spec_pending = ""
        self._published: dict[str, object] = {}
        self._memo: dict[str, str] = {}

    def attach(self, loaded: LoadedSpec) -> None:
        """Start exporting once the spec (and so the ledger location) is known."""
        self.loaded = loaded
        self._spec_pending = loaded.workflow_yaml

    def publish(self) -> None:
        """Mirror phase, spec name and current states into search attributes, memo and UI details.

        Search attributes and memo are upserted only when they change (each upsert is a
        history event); the current details are not history and follow every transition.
        """
        state = self.state
        attributes: dict[str, object] = {
            PHASE_ATTRIBUTE.name: state.phase.value,
            WORKFLOW_ATTRIBUTE.name: state.workflow,
            STATE_ATTRIBUTE.name: sorted(state.current_states),
        }
        updates: list[SearchAttributeUpdate[Any]] = []
        if attributes[PHASE_ATTRIBUTE.name] != self._published.get(PHASE_ATTRIBUTE.name):
            updates.append(PHASE_ATTRIBUTE.value_set(state.phase.value))
        if state.workflow and attributes[WORKFLOW_ATTRIBUTE.name] != self._published.get(
            WORKFLOW_ATTRIBUTE.name
        ):
            updates.append(WORKFLOW_ATTRIBUTE.value_set(state.workflow))
        if attributes[STATE_ATTRIBUTE.name] != self._published.get(STATE_ATTRIBUTE.name):
            updates.append(STATE_ATTRIBUTE.value_set(sorted(state.current_states)))
        if updates:
            workflow.upsert_search_attributes(updates)
            self._published = attributes
        memo = {"phase": state.phase.value, "ledger_uri": state.ledger_uri}
        if memo != self._memo:
            workflow.upsert_memo(memo)
            self._memo = memo
        workflow.set_current_details(current_details(state.view()))

    async def flush(self) -> None:
        """Export what changed since the last export, and publish it (after every wave transition)."""
        if self.state.has_changes() or self._spec_pending:
            await self.export(LedgerStatus.RUNNING if self._spec_pending else None)
        self.publish()

    async def export(self, status: LedgerStatus | None = None, error: str | None = None) -> None:
        """Merge the pending delta into the stored ledger; waits out storage outages."""
        if self.loaded is None:
            return
        spec = self.loaded.spec
        delta = self.state.take_delta(status=status, error=error)
        if self._spec_pending:
            delta = delta.model_copy(
                update={
                    "plan_fingerprint": self.loaded.plan_fingerprint,
                    "plan_change": self.loaded.accepted_change,
                }
            )
        await call_local(
            EXPORT_LEDGER,
            ExportLedgerInput(
                run_id=self.state.run_id,
                workflow=spec.name,
                api_version=spec.api_version,
                ledger_uri=self.loaded.ledger_uri,
                input_source=self.loaded.input_source,
                delta=delta,
                workflow_yaml=self._spec_pending,
            ),
            schedule_to_close_timeout=LEDGER_EXPORT_DEADLINE,
            retry_policy=LEDGER_RETRY,
            summary=f"export ledger ({status.value if status else 'update'})",
        )
        self._spec_pending = ""


@workflow.defn(name=WORKFLOW_TYPE, failure_exception_types=[pydantic.ValidationError])
class NpaWorkflowRun:
    """Runs one spec durably: every side effect is an activity; cleanup survives cancellation."""

    def __init__(self) -> None:
        self.state = RunState(run_id=workflow.info().workflow_id)
        self.recorder = RunRecorder(self.state)
        self.executor: TemporalExecutor | None = None

    @workflow.run
    async def run(self, request: RunRequest) -> RunSummary:
        """Load, walk, and always leave a ledger that says what happened."""
        if request.run_id and request.run_id != self.state.run_id:
            raise ApplicationError(
                f"run_id {request.run_id!r} differs from the workflow id "
                f"{self.state.run_id!r}; the run id is the workflow id",
                type=ErrorType.SPEC.value,
                non_retryable=True,
            )
        try:
            loaded = await self._load(request)
            await self._walk(request, loaded)
        except BaseException as exc:
            if is_cancelled_exception(exc):
                await asyncio.shield(asyncio.ensure_future(self._finish_cancelled()))
                raise
            await self._finish_failed(exc)
        self.state.run_succeeded()
        self.recorder.publish()
        await self.recorder.export(LedgerStatus.SUCCEEDED, error="")
        return self.state.summary()

    async def _load(self, request: RunRequest) -> LoadedSpec:
        loaded = await call(
            LOAD_SPEC,
            LoadSpecInput(
                run_id=self.state.run_id,
                spec=request.spec,
                spec_uri=request.spec_uri,
                vars=request.vars,
                catalogs=request.catalogs,
                assume_decision=request.assume_decision,
                accepted_change=request.accepted_change,
            ),
            start_to_close_timeout=timedelta(minutes=2),
            retry_policy=SHORT_RETRY,
            summary=f"load spec {request.spec_uri or '(inline)'}",
        )
        spec = loaded.spec
        if spec.metadata.execution_mode is ExecutionMode.RUNTIME and request.assume_decision:
            raise ApplicationError(
                f"{spec.source}: metadata.executionMode is 'runtime', so --assume-decision is only "
                "allowed for previews (plan-spec, render); remove it from the run",
                type=ErrorType.SPEC.value,
                non_retryable=True,
            )
        self.recorder.attach(loaded)
        self.state.run_started(workflow=spec.name, ledger_uri=loaded.ledger_uri, backend=request.backend)
        self.recorder.publish()
        return loaded

    async def _walk(self, request: RunRequest, loaded: LoadedSpec) -> None:
        spec, catalog = loaded.spec, loaded.catalog
        assumption = resolve_assumption(
            request.assume_decision, spec.config.get("plan_assume_decision"), spec.has_transitions()
        )
        self.executor = TemporalExecutor(request, loaded, self.state, self.recorder)
        walker = Walker(
            spec,
            catalog,
            build_run_context(spec, catalog, self.state.run_id),
            executor=self.executor,
            assumption=assumption,
            cap=request.max_concurrency,
        )
        await walker.walk()

    async def _finish_failed(self, exc: BaseException) -> None:
        """Cancel in-flight jobs first, then record the failure and fail the execution."""
        if is_activity_failure(exc):
            failure_class, message = classify_activity_error(exc)
            self.state.failure_class = self.state.failure_class or failure_class
        elif isinstance(exc, ApplicationError):
            message = exc.message
        elif isinstance(exc, NpaflowError | ValueError | KeyError):
            message = str(exc)
        else:
            raise exc  # a bug: fail the workflow task so a fixed worker can carry on
        if self.executor is not None:
            await self.executor.attempts.cancel_in_flight(f"run failed: {message}"[:600])
        self.state.run_failed(message)
        self.recorder.publish()
        await self._export_final(LedgerStatus.FAILED)
        summary = self.state.summary()
        raise ApplicationError(
            self.state.error, summary.model_dump(mode="json"), type="RunFailed", non_retryable=True
        ) from None

    async def _finish_cancelled(self) -> None:
        """Cancel every in-flight job by exact id, verify, and record it (DESIGN §3.5)."""
        self.state.run_cancelling(workflow.cancellation_reason() or "")
        self.recorder.publish()
        if self.executor is not None:
            await self.executor.attempts.cancel_in_flight(self.state.error)
        self.state.run_cancelled()
        self.recorder.publish()
        await self._export_final(LedgerStatus.CANCELLED)

    async def _export_final(self, status: LedgerStatus) -> None:
        """The last export; if even that fails, the run's error says the ledger is behind."""
        try:
            await self.recorder.export(status, error=self.state.error)
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            self.state.error = f"{self.state.error} (the ledger could not be written: {message})"

    @workflow.signal(name=Signal.CANCEL.value, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON)
    async def cancel(self, reason: str = "") -> None:
        """Cancel the run: the same cleanup as Temporal's own cancel; ends CANCELED."""
        self.state.cancel_reason = reason or "cancel signal"
        info = workflow.info()
        await call(
            REQUEST_CANCEL,
            RequestCancelInput(
                workflow_id=info.workflow_id, execution_id=info.run_id, reason=self.state.cancel_reason
            ),
            start_to_close_timeout=timedelta(minutes=1),
            retry_policy=SHORT_RETRY,
            summary=f"cancel requested: {self.state.cancel_reason}",
        )

    @workflow.signal(name=Signal.PAUSE.value)
    def pause(self) -> None:
        """Finish in-flight waves but launch no new one."""
        self.state.pause_requested = True

    @workflow.signal(name=Signal.RESUME.value)
    def resume(self) -> None:
        """Continue a paused run, or retry the failed wave of a suspended run."""
        self.state.pause_requested = False
        self.state.resume_requested = True

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> RunStatusView:
        """The live summary: phase, current states, waves with job ids, decisions, ledger."""
        return self.state.view()

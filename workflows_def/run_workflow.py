"""`NpaWorkflowRun`: one Temporal workflow per run; walks the spec with the Temporal executor."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pydantic
from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from npaflow.context import build_run_context
from npaflow.decisions import resolve_assumption
from npaflow.errors import NpaflowError
from npaflow.runtime.ledger import LedgerStatus, WaveStatus
from npaflow.runtime.messages import (
    ExportLedgerInput,
    ExportResult,
    LoadedSpec,
    LoadSpecInput,
    RequestCancelInput,
)
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunPhase, RunStatusView, RunSummary
from npaflow.spec.models import ExecutionMode
from npaflow.traversal import Walker
from workflows_def.activity_options import SHORT_RETRY
from workflows_def.executor import TemporalExecutor, iso
from workflows_def.run_book import RunBook

#: Search attribute holding the run phase, so suspended runs can be found with no worker.
PHASE_ATTRIBUTE = SearchAttributeKey.for_keyword("NpaflowPhase")


@workflow.defn(name="NpaWorkflowRun", failure_exception_types=[pydantic.ValidationError])
class NpaWorkflowRun:
    """Runs one spec durably: every side effect is an activity; cleanup survives cancellation."""

    def __init__(self) -> None:
        self.book = RunBook(run_id=workflow.info().workflow_id)
        self.paused = False
        self.resume_requested = False
        self.first_export = ""
        self.loaded: LoadedSpec | None = None
        self.executor: TemporalExecutor | None = None
        self.request: RunRequest | None = None

    @workflow.run
    async def run(self, request: RunRequest) -> RunSummary:
        """Load, walk, and always leave a ledger that says what happened."""
        if request.run_id and request.run_id != self.book.run_id:
            raise ApplicationError(f"run_id {request.run_id!r} differs from the workflow id "
                                   f"{self.book.run_id!r}; the run id is the workflow id",
                                   type="SpecError", non_retryable=True)
        self.request = request
        try:
            await self._load(request)
            await self._walk(request)
        except BaseException as exc:
            if is_cancelled_exception(exc):
                await asyncio.shield(asyncio.ensure_future(self._cleanup_cancelled()))
                raise
            await self._finish_failed(exc)
        await self._set_phase(RunPhase.SUCCEEDED)
        await self._export(LedgerStatus.SUCCEEDED, error="")
        return self.book.summary("succeeded")

    async def _load(self, request: RunRequest) -> None:
        self.loaded = await workflow.execute_activity(
            "load_spec", LoadSpecInput(run_id=self.book.run_id, spec=request.spec,
                                       spec_uri=request.spec_uri, vars=request.vars,
                                       catalogs=request.catalogs,
                                       assume_decision=request.assume_decision),
            result_type=LoadedSpec, start_to_close_timeout=timedelta(minutes=2),
            retry_policy=SHORT_RETRY, summary=f"load spec {request.spec_uri or '(inline)'}")
        spec = self.loaded.spec
        self.book.workflow, self.book.ledger_uri = spec.name, self.loaded.ledger_uri
        self.first_export = self.loaded.workflow_yaml
        if spec.metadata.execution_mode is ExecutionMode.RUNTIME and request.assume_decision:
            raise ApplicationError(
                f"{spec.source}: metadata.executionMode is 'runtime', so --assume-decision is only "
                "allowed for previews (plan-spec, render); remove it from the run",
                type="SpecError", non_retryable=True)
        await self._set_phase(RunPhase.RUNNING)

    async def _walk(self, request: RunRequest) -> None:
        assert self.loaded is not None
        spec, catalog = self.loaded.spec, self.loaded.catalog
        assumption = resolve_assumption(request.assume_decision,
                                        spec.config.get("plan_assume_decision"), spec.has_transitions())
        self.executor = TemporalExecutor(request, self.loaded, self.book, self,
                                         workflow.info().task_queue)
        walker = Walker(spec, catalog, build_run_context(spec, catalog, self.book.run_id),
                        executor=self.executor, assumption=assumption, cap=request.max_concurrency)
        await walker.walk()

    async def _finish_failed(self, exc: BaseException) -> None:
        if isinstance(exc, ActivityError) and isinstance(exc.cause, ApplicationError):
            message = exc.cause.message
        elif isinstance(exc, ApplicationError):
            message = exc.message
        elif isinstance(exc, NpaflowError | ValueError | KeyError):
            message = str(exc)
        else:
            raise exc
        self.book.error = " ".join(message.split())[:600]
        await self._set_phase(RunPhase.FAILED)
        if self.loaded is not None:
            await self._export(LedgerStatus.FAILED, error=self.book.error)
        summary = self.book.summary("failed")
        raise ApplicationError(self.book.error, summary.model_dump(mode="json"), type="RunFailed",
                               non_retryable=True) from None

    async def _cleanup_cancelled(self) -> None:
        """Cancel every in-flight job by exact id, verify, and record it (DESIGN §3.5)."""
        await self._set_phase(RunPhase.CANCELLING)
        reason = self.book.cancel_reason or workflow.cancellation_reason() or "no reason given"
        self.book.error = f"run cancelled: {reason}"
        if self.executor is not None:
            await self.executor.settle_pending_launches()
            for job in list(self.book.in_flight.values()):
                record = self.book.records[(job.key, job.attempt)]
                record = await self.executor.cancel_job(record)
                self.book.upsert(record.model_copy(update={
                    "status": WaveStatus.FAILED, "ended_at": iso(workflow.now()),
                    "error": self.book.error}))
        await self._set_phase(RunPhase.CANCELLED)
        if self.loaded is not None:
            await self._export(LedgerStatus.CANCELLED, error=self.book.error)

    async def _export(self, status: LedgerStatus | None = None, error: str | None = None) -> None:
        assert self.loaded is not None
        spec = self.loaded.spec
        delta = self.book.take_delta(status=status, error=error)
        if self.first_export:
            delta = delta.model_copy(update={"plan_fingerprint": self.loaded.plan_fingerprint})
        result = await workflow.execute_local_activity(
            "export_ledger", ExportLedgerInput(
                run_id=self.book.run_id, workflow=spec.name, api_version=spec.api_version,
                ledger_uri=self.loaded.ledger_uri, input_source=self.loaded.input_source,
                delta=delta, workflow_yaml=self.first_export),
            result_type=ExportResult, start_to_close_timeout=timedelta(minutes=2),
            retry_policy=SHORT_RETRY, summary=f"export ledger ({status.value if status else 'update'})")
        self.first_export = ""
        del result

    async def flush(self) -> None:
        """Export what changed since the last export (called after every wave transition)."""
        if self.book.has_changes() or self.first_export:
            await self._export(LedgerStatus.RUNNING if self.first_export else None)

    async def continue_as_new_if_suggested(self) -> None:
        """Start a fresh history at a wave boundary; the next execution replays from the ledger."""
        assert self.executor is not None
        if not workflow.info().is_continue_as_new_suggested():
            return
        if self.book.in_flight or self.executor.pending_launches or self.request is None:
            return
        await self.flush()
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.request.model_copy(update={"continued": True}))

    async def wait_while_paused(self) -> None:
        """The pause gate in front of every new launch."""
        if self.paused:
            await self.flush()
            await self._set_phase(RunPhase.PAUSED)
            await workflow.wait_condition(lambda: not self.paused)
            await self._set_phase(RunPhase.RUNNING)

    async def suspend_after_failure(self, error: str) -> bool:
        """Park a failed wave until `resume` (retry as a new attempt) or cancel."""
        self.book.error = error
        await self._set_phase(RunPhase.SUSPENDED)
        await self._export(LedgerStatus.SUSPENDED, error=error)
        self.resume_requested = False
        await workflow.wait_condition(lambda: self.resume_requested)
        self.resume_requested = False
        self.book.error = ""
        await self._set_phase(RunPhase.RUNNING)
        await self._export(LedgerStatus.RUNNING, error="")
        return True

    async def _set_phase(self, phase: RunPhase) -> None:
        self.book.phase = phase
        workflow.upsert_search_attributes([PHASE_ATTRIBUTE.value_set(phase.value)])
        workflow.upsert_memo({"phase": phase.value, "current_states": self.book.current_states,
                              "ledger_uri": self.book.ledger_uri})
        workflow.set_current_details(f"**phase** {phase.value}  \n**states** "
                                     f"{', '.join(self.book.current_states) or '-'}  \n"
                                     f"**ledger** {self.book.ledger_uri or '-'}")

    @workflow.signal(unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON)
    async def cancel(self, reason: str = "") -> None:
        """Cancel the run: the same cleanup as Temporal's own cancel; ends CANCELED."""
        self.book.cancel_reason = reason or "cancel signal"
        info = workflow.info()
        await workflow.execute_activity(
            "request_cancel", RequestCancelInput(workflow_id=info.workflow_id, run_id=info.run_id,
                                                 reason=self.book.cancel_reason),
            start_to_close_timeout=timedelta(minutes=1), retry_policy=SHORT_RETRY,
            summary=f"cancel requested: {self.book.cancel_reason}")

    @workflow.signal
    def pause(self) -> None:
        """Finish in-flight waves but launch no new one."""
        self.paused = True

    @workflow.signal
    def resume(self) -> None:
        """Continue a paused run, or retry the failed wave of a suspended run."""
        self.paused = False
        self.resume_requested = True

    @workflow.query
    def status(self) -> RunStatusView:
        """The live summary: phase, current states, waves with job ids, decisions, ledger."""
        return self.book.view()

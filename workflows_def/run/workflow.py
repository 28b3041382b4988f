"""`NpaWorkflowRun`: one Temporal workflow per run; walks the spec with the Temporal executor."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError, is_cancelled_exception

from npaflow.context import build_run_context
from npaflow.decisions import resolve_assumption
from npaflow.document.models import ExecutionMode
from npaflow.errors import BudgetSpentError, ErrorType, NpaflowError
from npaflow.ids import RunId
from npaflow.quota import LeaseAnswer
from npaflow.quota.messages import ANSWER_SIGNAL
from npaflow.runtime.cache.messages import FLIGHT_GRANTED_SIGNAL, FlightTicket
from npaflow.runtime.contract import (
    INTERNAL_ERROR_PREFIX,
    PENDING_LEDGER_QUERY,
    REQUEST_CANCEL,
    STATUS_QUERY,
    WORKFLOW_TYPE,
    Signal,
)
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.messages import ExportLedgerInput, RequestCancelInput
from npaflow.runtime.metrics import Metric, RunOutcome
from npaflow.runtime.notifications import RunEvent
from npaflow.runtime.request import RUN_ID_PATTERN, RunRequest
from npaflow.runtime.result import run_summary
from npaflow.runtime.run_state import RunState
from npaflow.runtime.signal_input import CancelInput, cancel_reason
from npaflow.runtime.status import FailureClass
from npaflow.runtime.status_pages import status_view
from npaflow.runtime.summary import RunStatusView, RunSummary
from npaflow.runtime.timestamps import clock_reading
from npaflow.traversal import Walker
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    SHORT_RETRY,
    call,
    classify_activity_error,
    is_activity_failure,
)
from workflows_def.cleanup import finish_shielded
from workflows_def.input_refusal import MALFORMED_INPUT
from workflows_def.metrics import count
from workflows_def.run.executor import TemporalExecutor
from workflows_def.run.notify import notify
from workflows_def.run.recorder import RunRecorder
from workflows_def.run.spec_load import load_run_spec
from workflows_def.run_deps import Mailbox, RunDeps


@workflow.defn(name=WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaWorkflowRun:
    """Runs one spec durably: every side effect is an activity; cleanup survives cancellation."""

    def __init__(self) -> None:
        self.state = RunState(run_id=RunId(workflow.info().workflow_id))
        self.recorder = RunRecorder(self.state)
        self.executor: TemporalExecutor | None = None
        self.request: RunRequest | None = None
        self.mailbox = Mailbox()

    @workflow.run
    async def run(self, request: RunRequest) -> RunSummary:
        """Check the run id, load, walk, and always leave a ledger that says what happened."""
        _check_run_id(self.state.run_id, request)
        self.request = request
        try:
            loaded = await self._load(request)
            await self._walk(request, loaded)
        except BaseException as exc:
            if is_cancelled_exception(exc):
                await finish_shielded(self._finish_cancelled())
                raise
            if not isinstance(exc, Exception):
                raise  # continue-as-new, or the worker evicting the run: not the run's end
            await self._finish_failed(exc)
        self.state.run_succeeded()
        count(Metric.RUNS_FINISHED, spec=self.state.workflow, outcome=RunOutcome.SUCCEEDED.value)
        self._count_hours()
        await notify(self.state, request, RunEvent.SUCCEEDED)
        await self._sync_final()
        return run_summary(self.state)

    async def _load(self, request: RunRequest) -> LoadedSpec:
        loaded = await load_run_spec(self.state.run_id, request)
        spec = loaded.spec
        if spec.metadata.execution_mode is ExecutionMode.RUNTIME and request.assume_decision:
            raise ApplicationError(
                f"{spec.source}: metadata.executionMode is 'runtime', so --assume-decision is only "
                "allowed for previews (plan-spec, render); remove it from the run",
                type=ErrorType.SPEC.value,
                non_retryable=True,
            )
        self.recorder.attach(loaded, request)
        self.state.run_started(
            workflow=spec.name,
            ledger_uri=loaded.ledger_uri,
            backend=request.backend,
            page_url=loaded.page_url,
        )
        self.state.usage_carried(loaded.prior.usage, counted=not request.continued)
        self.state.quota_carried(loaded.prior.quota_waits)
        self.state.decisions_carried(loaded.prior.decisions)
        if not request.continued:
            count(Metric.RUNS_STARTED, spec=spec.name)
        await self.recorder.sync()
        return loaded

    async def _walk(self, request: RunRequest, loaded: LoadedSpec) -> None:
        spec, catalog = loaded.spec, loaded.catalog
        assumption = resolve_assumption(
            request.assume_decision, spec.config.get("plan_assume_decision"), spec.has_transitions()
        )
        deps = RunDeps(request, loaded, self.state, self.recorder, self.mailbox)
        self.executor = TemporalExecutor(deps)
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
        failure_class: FailureClass | None = None
        if is_activity_failure(exc):
            failure_class, message = classify_activity_error(exc)
        elif isinstance(exc, ApplicationError):
            message = exc.message
        elif isinstance(exc, BudgetSpentError):
            failure_class, message = FailureClass.BUDGET, str(exc)
        elif isinstance(exc, NpaflowError | ValueError | KeyError):
            message = str(exc)
        else:  # a bug: cleanup still runs, so no job outlives the run (the ledger says what broke)
            message = f"{INTERNAL_ERROR_PREFIX}: {type(exc).__name__}: {exc}"
            workflow.logger.error("run.internal_error", exc_info=exc)
        if self.executor is not None:
            await self.executor.attempts.cancels.cancel_in_flight(f"run failed: {message}"[:600])
        self.state.run_failed(message, self.state.failure_class or failure_class)
        capacity = self.state.failure_class is FailureClass.CAPACITY
        count(
            Metric.RUNS_FINISHED,
            spec=self.state.workflow,
            outcome=(RunOutcome.CAPACITY if capacity else RunOutcome.FAILED).value,
        )
        self._count_hours()
        if self.request is not None:
            await notify(self.state, self.request, RunEvent.CAPACITY if capacity else RunEvent.FAILED)
        await self._sync_final()
        summary = run_summary(self.state)
        raise ApplicationError(
            self.state.error, summary.model_dump(mode="json"), type="RunFailed", non_retryable=True
        ) from None

    async def _finish_cancelled(self) -> None:
        """Cancel every in-flight job by exact id, verify, and record it (DESIGN §3.5)."""
        self.state.run_cancelling(workflow.cancellation_reason() or "")
        await self._locate_ledger()
        await self.recorder.sync()
        if self.executor is not None:
            await self.executor.attempts.cancels.cancel_in_flight(self.state.error)
        self.state.run_cancelled()
        count(Metric.RUNS_FINISHED, spec=self.state.workflow, outcome=RunOutcome.CANCELLED.value)
        self._count_hours()
        await self._sync_final()

    async def _locate_ledger(self) -> None:
        """A run cancelled before its spec loaded still leaves a ledger: load it now to learn where.

        Best effort: a spec that cannot load has no ledger location to write to.
        """
        if self.recorder.loaded is not None or self.request is None:
            return
        try:
            loaded = await load_run_spec(self.state.run_id, self.request)
        except ACTIVITY_FAILURES:
            return
        self.recorder.attach(loaded, self.request)
        self.state.run_located(
            workflow=loaded.spec.name,
            ledger_uri=loaded.ledger_uri,
            backend=self.request.backend,
            page_url=loaded.page_url,
        )

    def _count_hours(self) -> None:
        """The run's GPU- and node-hours by state, once, when it ends (never at continue-as-new)."""
        for state, usage in self.state.progress.hours_by_state().items():
            count(Metric.GPU_HOURS, usage.gpu_hours, spec=self.state.workflow, state=state)
            count(Metric.NODE_HOURS, usage.node_hours, spec=self.state.workflow, state=state)

    async def _sync_final(self) -> None:
        """The last export; if even that fails, the run says its ledger is behind (and keeps the delta).

        `npaflow status` (or a resume) brings the ledger to the run's final state later.
        """
        try:
            await self.recorder.sync()
        except ACTIVITY_FAILURES as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            self.state.ledger_export_failed(message)
            await self.recorder.sync()

    @workflow.signal(name=Signal.CANCEL.value, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON)
    async def cancel(self, reason: CancelInput = "") -> None:
        """Cancel the run: the same cleanup as Temporal's own cancel; ends CANCELED (any input)."""
        self.state.cancel_requested(cancel_reason(reason))
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

    @workflow.signal(name=FLIGHT_GRANTED_SIGNAL)
    def cache_flight_granted(self, ticket: FlightTicket) -> None:
        """This run holds the key's flight: it may launch the key's step (workflows_def/cache/layer.py)."""
        self.mailbox.flight_grants[ticket.key] = ticket.waited

    @workflow.signal(name=ANSWER_SIGNAL)
    def quota_answer(self, answer: LeaseAnswer) -> None:
        """A quota pool answered one of this run's waves: granted, its place in line, or refused."""
        self.mailbox.quota_answers[answer.lease_id] = answer

    @workflow.signal(name=Signal.PAUSE.value)
    def pause(self) -> None:
        """Finish in-flight waves but launch no new one."""
        self.state.pause_requested_by_operator()

    @workflow.signal(name=Signal.RESUME.value)
    def resume(self) -> None:
        """Continue a paused run, or retry the failed wave of a suspended run."""
        self.state.resume_requested_by_operator()

    @workflow.query(name=STATUS_QUERY)
    def status(self, now: str = "", before: int = -1) -> RunStatusView:
        """The live summary: phase, current states, waves with job ids, decisions, ledger.

        `now`: the asker's clock (a ledger timestamp), so a running job's spend grows between
        workflow tasks; omitted or unreadable, the workflow's own time. One bounded page:
        the newest wave attempts before index `before` (-1: the newest of all); the answer's
        `waves_start` is where to ask from next (npaflow/runtime/status_pages.py).
        """
        return status_view(self.state, now=clock_reading(now, workflow.now()), before=before)

    @workflow.query(name=PENDING_LEDGER_QUERY)
    def pending_ledger(self) -> ExportLedgerInput | None:
        """What the ledger lacks (None when current): `npaflow status` writes it for a closed run."""
        pending = self.recorder.pending_export()
        return pending[0] if pending else None


def _check_run_id(run_id: RunId, request: RunRequest) -> None:
    """The workflow id is the run id: it must be one (whoever started the run), and agree with run_id.

    Raises:
        ApplicationError: non-retryable; the run fails before anything is loaded or written.
    """
    if not RUN_ID_PATTERN.fullmatch(run_id):
        raise ApplicationError(
            f"workflow id {run_id[:120]!r} is not a valid run id: it becomes job names and ledger paths, "
            f"so it must match {RUN_ID_PATTERN.pattern} (letters, digits, '.', '_', '-'; at most 96); "
            "start the run again under a valid --workflow-id",
            type=ErrorType.SPEC.value,
            non_retryable=True,
        )
    if request.run_id and request.run_id != run_id:
        raise ApplicationError(
            f"run_id {request.run_id!r} differs from the workflow id {run_id!r}; the run id is the "
            "workflow id: drop run_id from the input or start the run with that --workflow-id",
            type=ErrorType.SPEC.value,
            non_retryable=True,
        )

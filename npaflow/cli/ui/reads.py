"""What the run page reads from Temporal: the runs list, a run's spec, and its live status.

A run's spec is in its input (the first event of its history), or for a run
started with `spec_uri` in what its load returned, read once per execution and
kept; its live status is its `status` query, asked only when a worker polls its
task queue (a query to a run no worker serves would just wait).
An ended run shows the summary it ended with, which the server keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.list_handler import run_rows, visibility_query
from npaflow.cli.live_view import live_view
from npaflow.cli.run_endings import ENDED_BEHIND, read_ending, read_reconciled
from npaflow.cli.run_row import RunRow
from npaflow.cli.ui.loaded_spec import loaded_spec
from npaflow.document.models import WorkflowSpec
from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import SpecError
from npaflow.runtime.reconcile import ReconcileResult
from npaflow.runtime.reconcile.shown import seen_ended, shown_update
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunStatusView
from npaflow.runtime.vocabulary import RunEnding, WaveStatus
from npaflow.spec.load import parse_spec
from npaflow.temporal.client import describe_or_fail
from npaflow.temporal.serving import pinned_build, unserved_reason

#: How long the page waits for a run's worker to answer its query.
QUERY_SECONDS = 5.0
#: After this long, a run that ended behind its code is drawn as it is: the reconciler has been.
SETTLED_SECONDS = 600
#: Executions whose specs are kept (a spec is parsed once per execution, not per refresh).
MAX_SPECS = 512


@dataclass
class Snapshot:
    """One run as the page shows it now."""

    run_id: str
    execution_id: str
    execution_status: str
    task_queue: str
    spec: WorkflowSpec | None = None
    view: RunStatusView | None = None
    problem: str = ""  # why there is no live view (no worker, the query failed)
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    ending: RunEnding | None = None  # terminated or timed out: ended without its code's cleanup
    reconciled: str = ""  # then, what the reconciler did with its last jobs
    settled: bool = True  # False while the reconciler may still change what the page shows

    @property
    def open(self) -> bool:
        """Whether the run's execution is still running."""
        return self.execution_status == WorkflowExecutionStatus.RUNNING.name


class RunReads:
    """Reads for the page, over one client; specs cached by execution."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._specs: dict[str, WorkflowSpec | None] = {}

    async def runs(self, phase: str, spec: str, limit: int) -> list[RunRow]:
        """The newest runs first, one row per run id (as `npaflow list`)."""
        now = datetime.now(UTC)
        query = visibility_query(phase, spec, "", now)
        return await run_rows(self.client, query, limit, now, newest_only=bool(phase))

    async def snapshot(self, run_id: str) -> Snapshot:
        """The run's spec and live status (raises UsageError when there is no such run)."""
        handle = self.client.get_workflow_handle(run_id)
        description = await describe_or_fail(handle)
        status = description.status.name if description.status else "UNKNOWN"
        shot = Snapshot(run_id, description.run_id or "", status, description.task_queue or "")
        shot.started_at = description.start_time
        shot.spec = await self._spec(run_id, shot.execution_id)
        if not shot.open and await self._ended(handle, shot):
            await self._swept(shot)
            return shot
        if unserved := await unserved_reason(self.client, shot.task_queue, pinned_build(description)):
            shot.problem = f"{unserved}; this page shows the spec only until then"
            return shot
        try:
            shot.view = await live_view(handle, QUERY_SECONDS)
        except (TimeoutError, RPCError) as error:
            shot.problem = f"its worker did not answer the status query ({type(error).__name__}); retrying"
        shot.ending = ENDED_BEHIND.get(description.status) if description.status else None
        if shot.ending is not None:
            await self._reconciled(shot)
            closed = description.close_time or shot.started_at
            shot.settled |= (datetime.now(UTC) - closed).total_seconds() > SETTLED_SECONDS
        elif not shot.open:
            await self._swept(shot)
        return shot

    async def _swept(self, shot: Snapshot) -> None:
        """A run its code ended whose job the orphan sweep cancelled afterwards: the ledger's word on it."""
        view = shot.view
        if view is None or not any(w.status is WaveStatus.CANCELLED and w.job_id for w in view.waves):
            return
        result = (await read_reconciled(self.client, shot.run_id)).result
        if result is not None and result.acted():
            shot.reconciled = _cancelled_by_id(result) if result.jobs else seen_ended(view, result)
            shot.view = view.model_copy(update=shown_update(view, result))

    async def _reconciled(self, shot: Snapshot) -> None:
        """A run ended behind its code: its last jobs as the reconciler left them, its hours stopped.

        Its own answer still counts those jobs as running; the reconciler's says how each
        ended and what the ledger counts.
        """
        reconciled = await read_reconciled(self.client, shot.run_id)
        view, result = shot.view, reconciled.result
        shot.reconciled, shot.settled = reconciled.note, reconciled.settled
        if result is not None and result.jobs:
            shot.reconciled = _cancelled_by_id(result)
        if view is None:
            return
        update = shown_update(view, result) if result is not None else {}
        shot.view = view.model_copy(update={**update, "current_states": [], "pause_requested": False})

    async def _ended(self, handle: WorkflowHandle[Any, Any], shot: Snapshot) -> bool:
        """An ended run's view from the summary it ended with: no worker, so no query, needed.

        False when it ended with none (cancelled, terminated): its query then draws it.
        """
        ending = await read_ending(self.client, handle)
        shot.view = ending.view
        if shot.view is None and shot.execution_status == WorkflowExecutionStatus.FAILED.name:
            shot.problem = f"refused before its code ran: {ending.failure}"
            return True
        if shot.view is not None and shot.spec is None and shot.view.error:
            shot.problem = f"failed before its spec was loaded: {shot.view.error}"
        return shot.view is not None

    async def _spec(self, run_id: str, execution_id: str) -> WorkflowSpec | None:
        if execution_id in self._specs:
            return self._specs[execution_id]
        request = await self._request(run_id, execution_id)
        spec = None
        if request is not None and not request.spec:  # started with spec_uri: the load has it
            spec = await loaded_spec(self.client, run_id, execution_id)
        elif request is not None:
            try:
                spec, _ = parse_spec(parse_yaml(request.spec, f"{run_id} input"), dict(request.vars))
            except SpecError:
                spec = None  # the run itself failed on it; the page says so through its status
        if len(self._specs) >= MAX_SPECS:
            self._specs.pop(next(iter(self._specs)))
        self._specs[execution_id] = spec
        return spec

    async def _request(self, run_id: str, execution_id: str) -> RunRequest | None:
        """The execution's input, from the first event of its history."""
        handle = self.client.get_workflow_handle(run_id, run_id=execution_id or None)
        async for event in handle.fetch_history_events(page_size=1):
            started = event.workflow_execution_started_event_attributes
            payloads = list(started.input.payloads)
            if not payloads:
                return None
            try:
                (request,) = await self.client.data_converter.decode(payloads, [RunRequest])
            except Exception:  # noqa: BLE001 - not npaflow's input: nothing to draw
                return None
            return request if isinstance(request, RunRequest) else None
        return None


def _cancelled_by_id(result: ReconcileResult) -> str:
    return f"the reconciler cancelled its jobs by exact id: {', '.join(job.job_id for job in result.jobs)}"

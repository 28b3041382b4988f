"""Where a run waits: the pause gate before each launch, suspension, and continue-as-new.

None of these is on a plain run's way; each makes the ledger current (a note
with a flush effect) before it waits or hands the history over.
"""

from __future__ import annotations

from temporalio import workflow

from npaflow.runtime.ledger.book import AttemptId
from npaflow.runtime.notifications import RunEvent
from npaflow.runtime.payload_limits import history_past_share
from npaflow.runtime.request import OnFailure
from npaflow.runtime.status import RetryBudget
from workflows_def.run.notify import notify
from workflows_def.run.outputs import AttemptOutcome
from workflows_def.run_deps import RunDeps


class RunGates:
    """The run's waits, between waves; launches still in progress hold continue-as-new back."""

    def __init__(
        self, deps: RunDeps, pending_launches: dict[AttemptId, workflow.ActivityHandle[object]]
    ) -> None:
        self.request, self.state, self.recorder = deps.request, deps.state, deps.recorder
        self.pending_launches = pending_launches

    def suspends(self, outcome: AttemptOutcome) -> bool:
        """A failure a retry could fix, under on_failure=suspend: park the wave instead of failing."""
        retryable = outcome.failure_class.budget() is not RetryBudget.NONE
        retryable = retryable and not (outcome.kept or outcome.fail_closed)
        return retryable and self.request.on_failure is OnFailure.SUSPEND

    async def suspend(self, error: str) -> None:
        """Park a failed wave until `resume` (a new attempt) or cancel."""
        self.state.run_suspended(error)
        await self.recorder.sync()
        await notify(self.state, self.request, RunEvent.SUSPENDED)
        await self.recorder.sync()  # how the notification went, before the wait
        await workflow.wait_condition(lambda: self.state.resume_requested)
        self.state.run_resumed()
        await self.recorder.sync()

    async def pause_gate(self) -> None:
        """In front of every new launch: nothing launches once a cancel was asked for; wait while paused.

        The `cancel` signal asks Temporal to cancel this execution (REQUEST_CANCEL); a
        launch between the signal and that cancellation (a worker picking up a run
        cancelled while none polled) would start a job only to cancel it.
        """
        if self.state.cancel_reason:
            await workflow.wait_condition(lambda: False)  # the cancellation ends this wait
        if not self.state.pause_requested:
            return
        self.state.launches_held()
        await self.recorder.sync()
        self.state.run_paused()
        await self.recorder.sync()
        await workflow.wait_condition(lambda: not self.state.pause_requested)
        self.state.run_resumed()
        await self.recorder.sync()

    def _asked_to_stop(self) -> bool:
        """A pause or cancel asked of this execution: the next one would not know of it."""
        return self.state.pause_requested or bool(self.state.cancel_reason)

    async def continue_as_new_if_suggested(self, sequence: int) -> None:
        """At a wave boundary with nothing in flight, start a fresh history from the ledger.

        When the server suggests it, or the history reached its share of Temporal's limits
        (npaflow/runtime/payload_limits.py): between two batches of a wide group as well.
        `sequence`: the wave about to run; the next execution keeps how the waves before it ended.
        """
        info = workflow.info()
        grown = history_past_share(info.get_current_history_length(), info.get_current_history_size())
        if not (info.is_continue_as_new_suggested() or grown):
            return
        if self.state.waves.in_flight() or self.pending_launches or self._asked_to_stop():
            return
        self.state.handing_over()
        await self.recorder.sync()
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._asked_to_stop():  # a pause or cancel that came meanwhile: it acts first, here
            return
        handover = {"continued": True, "handed_over_at": sequence}
        workflow.continue_as_new(self.request.model_copy(update=handover))

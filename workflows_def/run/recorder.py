"""What a run records outside itself: ledger deltas, search attributes, memo, UI details.

`RunRecorder.sync` does what the transitions since the last call declared
(`Effect` in npaflow/runtime/transitions.py): the call sites never decide what
to export or publish, and the ledger status always follows the run's phase.
A delta stays pending until its export succeeded (npaflow/runtime/ledger/book.py).
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from npaflow.images import ImageBinding
from npaflow.runtime.contract import EXPORT_LEDGER, RunMemo, SearchAttribute
from npaflow.runtime.ledger.book import Receipt
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.messages import ExportLedgerInput
from npaflow.runtime.payload_limits import keywords_within
from npaflow.runtime.progress_view import progress_view
from npaflow.runtime.request import RunRequest
from npaflow.runtime.run_state import RunState
from npaflow.runtime.transitions import Effect
from npaflow.runtime.ui_text import current_details
from workflows_def import patches
from workflows_def.activity_calls import LEDGER_RETRY, call_local, ledger_deadline, retries_within

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
    """Exports the run's ledger deltas and mirrors its state into Temporal's views of it."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.loaded: LoadedSpec | None = None
        self._published: dict[str, object] = {}
        self._memo: dict[str, Any] = {}
        self._deadline = ledger_deadline(RunRequest.model_fields["transport_recovery_seconds"].default)
        self._images: ImageBinding | None = None

    def attach(self, loaded: LoadedSpec, request: RunRequest) -> None:
        """Start exporting once the spec (and so the ledger location) is known."""
        self.loaded = loaded
        self._images = request.images
        self._deadline = ledger_deadline(request.transport_recovery_seconds)

    async def sync(self) -> None:
        """Carry out the effect the latest transitions declared (nothing when none did)."""
        effect = self.state.take_effect()
        if effect is Effect.DETAILS:
            self._details()
        elif effect is Effect.PUBLISH:
            self._publish()
        elif effect is Effect.EXPORT:
            await self._export()
        elif effect is Effect.FLUSH:
            await self._export()
            self._publish()
        elif effect is Effect.ANNOUNCE:
            self._publish()
            await self._export()

    def _publish(self) -> None:
        """Mirror phase, spec name and current states into search attributes, memo and UI details.

        Search attributes and memo are upserted only when they change (each upsert is a
        history event); the current details are not history and follow every transition.
        """
        state = self.state
        attributes: dict[str, object] = {
            PHASE_ATTRIBUTE.name: state.phase.value,
            WORKFLOW_ATTRIBUTE.name: state.workflow,
            STATE_ATTRIBUTE.name: keywords_within(sorted(state.current_states)),  # under Temporal's 2 KiB
        }
        updates: list[SearchAttributeUpdate[Any]] = []
        if attributes[PHASE_ATTRIBUTE.name] != self._published.get(PHASE_ATTRIBUTE.name):
            updates.append(PHASE_ATTRIBUTE.value_set(state.phase.value))
        if state.workflow and attributes[WORKFLOW_ATTRIBUTE.name] != self._published.get(
            WORKFLOW_ATTRIBUTE.name
        ):
            updates.append(WORKFLOW_ATTRIBUTE.value_set(state.workflow))
        if attributes[STATE_ATTRIBUTE.name] != self._published.get(STATE_ATTRIBUTE.name):
            updates.append(STATE_ATTRIBUTE.value_set(keywords_within(sorted(state.current_states))))
        if updates:
            workflow.upsert_search_attributes(updates)
            self._published = attributes
        kept = RunMemo(phase=state.phase.value, ledger_uri=state.ledger_uri)
        if state.phase.is_final() and patches.has(patches.FINAL_USAGE):
            usage = state.progress.usage()  # for `npaflow list`: the run's hours, once it ended
            kept = kept.model_copy(update={"gpu_hours": usage.gpu_hours, "node_hours": usage.node_hours})
            if state.quota.by_id:  # only runs that waited: every other memo stays as it was
                kept = kept.model_copy(update={"waited_seconds": round(state.quota.waited_seconds(), 1)})
            if state.waves.unverified:  # the workers' ledger sweep follows such jobs until they end
                kept = kept.model_copy(update={"unverified_cancels": len(state.waves.unverified)})
        if state.ledger.failed_export:
            kept = kept.model_copy(update={"ledger_behind": state.ledger.failed_export[:300]})
        memo = kept.kept()
        if memo != self._memo:
            workflow.upsert_memo(memo)
            self._memo = memo
        self._details()

    def _details(self) -> None:
        """The UI's current details: not history, so they follow every change that asks."""
        workflow.set_current_details(current_details(progress_view(self.state)))

    async def _export(self) -> None:
        """Send the pending delta to the ledger when it lacks something; waits out storage outages.

        Raises:
            ActivityError: the export failed past the ledger's deadline (the delta stays pending).
        """
        pending = self.pending_export()
        if pending is None:
            return
        request, receipt = pending
        status = request.delta.status.value if request.delta.status else "update"
        await call_local(
            EXPORT_LEDGER,
            request,
            schedule_to_close_timeout=self._deadline,
            retry_policy=retries_within(LEDGER_RETRY, self._deadline),
            summary=f"export ledger ({status})",
        )
        self.state.ledger_written(receipt)

    def pending_export(self) -> tuple[ExportLedgerInput, Receipt] | None:
        """The export the ledger lacks (None when it is current): also what a repair writes."""
        state, loaded = self.state, self.loaded
        if loaded is None or not state.ledger_is_behind():
            return None
        delta, receipt = state.pending_delta()
        spec = loaded.spec
        if receipt.spec:
            update = {"plan_fingerprint": loaded.plan_fingerprint, "plan_change": loaded.accepted_change}
            delta = delta.model_copy(update={**update, "images": self._images})
        request = ExportLedgerInput(
            run_id=state.run_id,
            workflow=spec.name,
            api_version=spec.api_version,
            ledger_uri=loaded.ledger_uri,
            input_source=loaded.input_source,
            delta=delta,
            workflow_yaml=loaded.workflow_yaml if receipt.spec else "",
        )
        return request, receipt

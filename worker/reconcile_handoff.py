"""Handing a closed run's orphans (or its open ledger) to the run's one reconcile workflow."""

from __future__ import annotations

from temporalio.client import Client

from activities.context import ActivityContext
from npaflow.runtime.contract import RECONCILE_SIGNAL, RECONCILE_WORKFLOW_TYPE
from npaflow.runtime.reconcile import OrphanBatch, reconcile_workflow_id
from npaflow.temporal.helper_runs import helper_attributes


async def hand_to_reconciler(client: Client, context: ActivityContext, batch: OrphanBatch) -> None:
    """Signal-with-start: however many workers find the same run, one workflow acts on it."""
    await client.start_workflow(
        RECONCILE_WORKFLOW_TYPE,
        batch,
        id=reconcile_workflow_id(batch.run_id),
        task_queue=context.task_queue,
        start_signal=RECONCILE_SIGNAL,
        start_signal_args=[batch],
        search_attributes=helper_attributes(),  # out of the UI's run list
    )

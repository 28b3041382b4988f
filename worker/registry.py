"""Workflows and activities a worker registers, per task queue, from the contract."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from activities.artifacts import ArtifactActivities, RunArtifactActivities
from activities.cache import CacheActivities
from activities.context import ActivityContext
from activities.control import request_cancel
from activities.fanout import FanOutActivities
from activities.job_control import JobControlActivities
from activities.jobs import JobActivities
from activities.launch import LaunchActivities
from activities.ledger import LedgerActivities
from activities.notify import Notifier
from activities.reconcile import ReconcileActivities
from activities.run_report import ReportActivities
from activities.runs import RunActivities
from npaflow.runtime import contract
from npaflow.runtime.contract import ACTIVITIES, WORKER_QUEUE_ACTIVITIES, QueueKind
from workflows_def import WORKFLOWS

__all__ = ["WORKFLOWS", "activities_for", "implementations"]


def implementations(context: ActivityContext) -> dict[str, Callable[..., Any]]:
    """Every activity implementation, keyed by its contract name."""
    jobs, control = JobActivities(context), JobControlActivities(context)
    artifacts, runs = ArtifactActivities(context), RunActivities(context)
    run_artifacts = RunArtifactActivities(context)
    reports = ReportActivities(context.storage, context.ui_url)
    ledger = LedgerActivities(context.storage, context.ledger_cache, reports.write_at_end)
    reconcile = ReconcileActivities(ledger)
    cache = CacheActivities(context)
    fan_out = FanOutActivities(context)
    return {
        contract.LOAD_SPEC.name: runs.load_spec,
        contract.READ_LOAD_PART.name: runs.delivery.read_load_part,
        contract.LAUNCH_WAVE.name: LaunchActivities(context).launch_wave,
        contract.AWAIT_WAVE.name: jobs.await_wave,
        contract.CANCEL_WAVE.name: control.cancel_wave,
        contract.READ_JOB_LOGS.name: control.read_job_logs,
        contract.CHECK_OUTPUTS.name: artifacts.check_outputs,
        contract.READ_DECISION.name: artifacts.read_decision,
        contract.WAIT_TRIGGER.name: artifacts.wait_trigger,
        contract.EXPORT_LEDGER.name: ledger.export_ledger,
        contract.REQUEST_CANCEL.name: request_cancel,
        contract.NOTIFY_RUN.name: Notifier(context.notify_webhooks, context.ui_url).notify_run,
        contract.LIST_ARTIFACTS.name: run_artifacts.list_artifacts,
        contract.READ_RUN_WAVES.name: run_artifacts.read_run_waves,
        contract.CHECK_RUN.name: reconcile.check_run,
        contract.RECORD_RECONCILED.name: reconcile.record_reconciled,
        contract.CACHE_LOOKUP.name: cache.cache_lookup,
        contract.CACHE_STORE.name: cache.cache_store,
        contract.REQUEST_FLIGHT.name: cache.request_cache_flight,
        contract.CACHE_ADMIN.name: cache.cache_admin,
        contract.RENDER_REPORT.name: reports.render_report,
        contract.READ_ITEMS.name: fan_out.read_items,
        contract.WRITE_MEMBERS.name: fan_out.write_members,
        contract.DIFF_ITEMS.name: fan_out.diff_items,
    }


def activities_for(context: ActivityContext, queue: QueueKind) -> list[Callable[..., Any]]:
    """The activities served on one of a worker's task queues (contract.ActivityRef.queue)."""
    served = implementations(context)
    if queue is QueueKind.WORKER:
        return [served[ref.name] for ref in WORKER_QUEUE_ACTIVITIES]
    refs = [ref for ref in ACTIVITIES if ref.queue is queue]
    return [served[ref.name] for ref in refs]

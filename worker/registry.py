"""Task queues, workflows and activities: registered here, imported by worker, CLI and tests."""

from __future__ import annotations

from collections.abc import Callable

from activities.context import ActivityContext
from activities.control import request_cancel
from activities.decisions import DecisionActivities
from activities.ledger import LedgerActivities
from activities.specs import SpecActivities
from activities.waves import WaveActivities
from workflows_def import NpaWorkflowRun
from workflows_def.activity_options import TASK_QUEUE, poll_task_queue

TASK_QUEUE_MAIN = TASK_QUEUE
TASK_QUEUE_POLL = poll_task_queue(TASK_QUEUE)
WORKFLOWS = [NpaWorkflowRun]
WORKFLOW_TYPE = "NpaWorkflowRun"
#: Search attributes the workflow upserts; the worker and `npaflow dev` register them.
SEARCH_ATTRIBUTES = {"NpaflowPhase": "Keyword"}


def main_activities(context: ActivityContext) -> list[Callable[..., object]]:
    """Short activities served on the main task queue (launch, cancel, S3 reads, ledger)."""
    waves = WaveActivities(context)
    decisions = DecisionActivities(context)
    return [SpecActivities(context).load_spec, waves.launch_wave, waves.cancel_wave,
            waves.check_outputs, decisions.read_decision, LedgerActivities(context).export_ledger,
            request_cancel]


def poll_activities(context: ActivityContext) -> list[Callable[..., object]]:
    """Long heartbeating activities served on the pollers' own task queue."""
    return [WaveActivities(context).await_wave, DecisionActivities(context).wait_trigger]

"""The spec a run loaded, read from its history: a run started with `spec_uri` has no spec text in its input.

The workflow's first step is the `load_spec` activity, a local one (a marker in
the history) or, in runs from before that, a regular one; either way its result,
the validated spec, is in the first events. Reading it needs no worker and no
access to the URI (which may name a file only the worker's host can read).
"""

from __future__ import annotations

import json
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from npaflow.document.models import WorkflowSpec
from npaflow.runtime.contract import LOAD_SPEC
from npaflow.runtime.messages import LoadedSpec

#: The load comes in the first workflow task; this many events is far past it.
FIRST_EVENTS = 40
#: The SDK's marker of a local activity: `data` names the activity, `result` holds its result.
LOCAL_ACTIVITY_MARKER = "core_local_activity"


async def loaded_spec(client: Client, run_id: str, execution_id: str) -> WorkflowSpec | None:
    """The spec the run's `load_spec` returned, or None (not loaded yet, refused, or not npaflow's)."""
    handle = client.get_workflow_handle(run_id, run_id=execution_id or None)
    scheduled: set[int] = set()
    seen = 0
    async for event in handle.fetch_history_events(page_size=FIRST_EVENTS):
        payload = _load_result(event, scheduled)
        if payload is not None:
            try:
                (loaded,) = await client.data_converter.decode([payload], [LoadedSpec])
            except Exception:  # noqa: BLE001 - not a result this code can read: draw no graph
                return None
            return loaded.spec if isinstance(loaded, LoadedSpec) else None
        seen += 1
        if seen >= FIRST_EVENTS:
            break
    return None


def _load_result(event: HistoryEvent, scheduled: set[int]) -> Payload | None:
    """The load's result payload if `event` carries it; notes a regular load's scheduling."""
    if event.HasField("marker_recorded_event_attributes"):
        marker = event.marker_recorded_event_attributes
        if marker.marker_name != LOCAL_ACTIVITY_MARKER or "result" not in marker.details:
            return None
        data = marker.details["data"].payloads if "data" in marker.details else []
        if data and _activity_type(data[0].data) == LOAD_SPEC.name and marker.details["result"].payloads:
            return marker.details["result"].payloads[0]
        return None
    if event.HasField("activity_task_scheduled_event_attributes"):
        if event.activity_task_scheduled_event_attributes.activity_type.name == LOAD_SPEC.name:
            scheduled.add(event.event_id)
        return None
    if event.HasField("activity_task_completed_event_attributes"):
        completed = event.activity_task_completed_event_attributes
        if completed.scheduled_event_id in scheduled and completed.result.payloads:
            return completed.result.payloads[0]
    return None


def _activity_type(data: bytes) -> str:
    try:
        marker: Any = json.loads(data)
    except ValueError:
        return ""
    return str(marker.get("activity_type", "")) if isinstance(marker, dict) else ""

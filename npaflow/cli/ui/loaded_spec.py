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
from npaflow.runtime.contract import LOAD_SPEC, READ_LOAD_PART
from npaflow.runtime.spec_parts import LoadPart, SpecLoad, unpack

#: The load comes in the first workflow task; this many events is far past it.
FIRST_EVENTS = 40
#: The SDK's marker of a local activity: `data` names the activity, `result` holds its result.
LOCAL_ACTIVITY_MARKER = "core_local_activity"


async def loaded_spec(client: Client, run_id: str, execution_id: str) -> WorkflowSpec | None:
    """The spec the run's `load_spec` returned, or None (not loaded yet, refused, or not npaflow's).

    A wide spec's load names its packed parts, read back by the `read_load_part` calls after it.
    """
    handle = client.get_workflow_handle(run_id, run_id=execution_id or None)
    scheduled: dict[int, str] = {}
    load: SpecLoad | None = None
    parts: list[LoadPart] = []
    seen = 0
    async for event in handle.fetch_history_events(page_size=FIRST_EVENTS):
        found = _activity_result(event, scheduled)
        if found is not None:
            name, payload = found
            try:
                if name == LOAD_SPEC.name:
                    (load,) = await client.data_converter.decode([payload], [SpecLoad])
                elif load is not None:
                    parts += await client.data_converter.decode([payload], [LoadPart])
            except Exception:  # noqa: BLE001 - not a result this code can read: draw no graph
                return None
            spec = _spec_of(load, parts)
            if spec is not None:
                return spec
        seen += 1
        if seen >= FIRST_EVENTS + 2 * (load.parts.count if load is not None and load.parts else 0):
            break
    return None


def _spec_of(load: SpecLoad | None, parts: list[LoadPart]) -> WorkflowSpec | None:
    """The spec once the load and all its parts are in; None while some are still to come."""
    if load is None:
        return None
    if load.parts is None:
        return load.whole().spec
    if len(parts) < load.parts.count:
        return None
    try:
        return unpack(load.parts, parts).spec
    except ValueError:
        return None


def _activity_result(event: HistoryEvent, scheduled: dict[int, str]) -> tuple[str, Payload] | None:
    """The (activity, result payload) of a load or a part if `event` carries one; notes schedulings."""
    if event.HasField("marker_recorded_event_attributes"):
        marker = event.marker_recorded_event_attributes
        if marker.marker_name != LOCAL_ACTIVITY_MARKER or "result" not in marker.details:
            return None
        data = marker.details["data"].payloads if "data" in marker.details else []
        name = _activity_type(data[0].data) if data else ""
        if name in _READ and marker.details["result"].payloads:
            return name, marker.details["result"].payloads[0]
        return None
    if event.HasField("activity_task_scheduled_event_attributes"):
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        if name in _READ:
            scheduled[event.event_id] = name
        return None
    if event.HasField("activity_task_completed_event_attributes"):
        completed = event.activity_task_completed_event_attributes
        if completed.scheduled_event_id in scheduled and completed.result.payloads:
            return scheduled[completed.scheduled_event_id], completed.result.payloads[0]
    return None


_READ = frozenset({LOAD_SPEC.name, READ_LOAD_PART.name})


def _activity_type(data: bytes) -> str:
    try:
        marker: Any = json.loads(data)
    except ValueError:
        return ""
    return str(marker.get("activity_type", "")) if isinstance(marker, dict) else ""

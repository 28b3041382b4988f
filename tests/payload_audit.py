"""Every payload a test's runs put in a history stays under Temporal's 256 KiB warning (issue 63).

The audit walks each history event's protobuf for `Payload` messages: workflow
inputs and results, activity inputs and results, local-activity markers, signals,
memo and search-attribute upserts, continue-as-new inputs. A test whose runs
carry a payload past the budget fails at teardown, naming the run, the event and
the size. A test that sends an oversized payload on purpose (hostile input
through `temporal workflow start`) says so with `@pytest.mark.large_payloads`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING


def payloads_in(message: Message) -> Iterator[Payload]:
    """Every `Payload` anywhere inside a protobuf message."""
    if isinstance(message, Payload):
        yield message
        return
    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if isinstance(value, Message):
            values = [value]
        elif field.message_type.GetOptions().map_entry:
            values = list(value.values())
        else:
            values = list(value)
        for item in values:
            if isinstance(item, Message):
                yield from payloads_in(item)


async def oversized_payloads(
    client: Client, since: datetime, budget: int = TEMPORAL_PAYLOAD_WARNING
) -> list[str]:
    """Each payload past `budget` bytes in the histories of runs started since `since`."""
    found: list[str] = []
    stamp = since.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    async for execution in client.list_workflows(f"StartTime >= '{stamp}'"):
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        async for event in handle.fetch_history_events():
            for payload in payloads_in(event):
                size = payload.ByteSize()
                if size > budget:
                    kind = EventType.Name(event.event_type)
                    found.append(f"{execution.id} event {event.event_id} ({kind}): {size:,} bytes")
    return found

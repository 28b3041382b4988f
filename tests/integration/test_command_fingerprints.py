"""The commands `NpaWorkflowRun` issues for every shipped example, pinned as files.

Recorded histories replay only the paths they exercised; this runs each example
afresh on the local backend and compares the sequence of commands it issued
(activities scheduled, local-activity and patch markers, timers, search-attribute
and memo upserts, the ending) with `tests/fingerprints/<example>.txt`. A change
that alters them is a replay break for runs in flight: put it behind a patch
(workflows_def/patches.py), then rewrite the files with
`NPAFLOW_UPDATE_FINGERPRINTS=1 python -m pytest tests/integration/test_command_fingerprints.py`
and say why in the commit.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHistory

from tests.harness import ROOT, Harness

pytestmark = pytest.mark.integration

EXAMPLES = sorted((ROOT / "specs" / "examples").glob("*.yaml"))
FINGERPRINTS = ROOT / "tests" / "fingerprints"


def command_of(event: HistoryEvent) -> str | None:
    """The command behind an event, in words stable across runs (None: not a command's event)."""
    kind = event.WhichOneof("attributes") or ""
    if kind == "activity_task_scheduled_event_attributes":
        return f"schedule activity {event.activity_task_scheduled_event_attributes.activity_type.name}"
    if kind == "marker_recorded_event_attributes":
        marker = event.marker_recorded_event_attributes
        if marker.marker_name == "core_patch":
            return "marker patch"
        return f"marker {marker.marker_name}"
    if kind == "timer_started_event_attributes":
        return "start timer"
    if kind == "timer_canceled_event_attributes":
        return "cancel timer"
    if kind == "upsert_workflow_search_attributes_event_attributes":
        fields = sorted(
            event.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
        )
        return f"upsert search attributes {','.join(fields)}"
    if kind == "workflow_properties_modified_event_attributes":
        return "upsert memo"
    if kind.startswith("workflow_execution_") and kind != "workflow_execution_started_event_attributes":
        return kind.removesuffix("_event_attributes").replace("_", " ")
    return None


def fingerprint(history: WorkflowHistory) -> list[str]:
    return [command for event in history.events if (command := command_of(event))]


@pytest.mark.parametrize("spec", EXAMPLES, ids=[spec.stem for spec in EXAMPLES])
async def test_an_example_run_issues_the_pinned_command_sequence(
    local_harness: Harness, tmp_path: Path, spec: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            spec.read_text(), run_id=f"fp-{spec.stem}-{uuid.uuid4().hex[:6]}", vars={"root": str(tmp_path)}
        )
        await handle.result()
        commands = fingerprint(await handle.fetch_history())
    pinned = FINGERPRINTS / f"{spec.stem}.txt"
    if os.environ.get("NPAFLOW_UPDATE_FINGERPRINTS"):
        pinned.write_text("\n".join(commands) + "\n")
    assert commands == pinned.read_text().splitlines(), (
        f"{spec.name}: the run's commands changed, a replay break for runs in flight (see the docstring)"
    )

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
from temporalio.testing import WorkflowEnvironment

from npaflow.quota import PoolConfig, QuotaClaim
from npaflow.temporal.pools import pool_status, set_pool
from tests.harness import ROOT, Harness
from tests.helpers import eventually
from tests.spec_factory import gpu_spec

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
    if kind == "signal_external_workflow_execution_initiated_event_attributes":
        signal = event.signal_external_workflow_execution_initiated_event_attributes
        return f"signal external {signal.signal_name}"
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
    inputs = ("workflow_execution_started_event_attributes", "workflow_execution_signaled_event_attributes")
    if kind.startswith("workflow_execution_") and kind not in inputs:
        return kind.removesuffix("_event_attributes").replace("_", " ")
    return None


def fingerprint(history: WorkflowHistory) -> list[str]:
    return [command for event in history.events if (command := command_of(event))]


def assert_pinned(name: str, commands: list[str]) -> None:
    pinned = FINGERPRINTS / f"{name}.txt"
    if os.environ.get("NPAFLOW_UPDATE_FINGERPRINTS"):
        pinned.write_text("\n".join(commands) + "\n")
    assert commands == pinned.read_text().splitlines(), (
        f"{name}: the run's commands changed, a replay break for runs in flight (see the docstring)"
    )


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
    assert_pinned(spec.stem, commands)


async def test_a_cached_run_issues_the_pinned_commands_on_a_miss_and_on_a_hit(
    local_harness: Harness, tmp_path: Path
) -> None:
    out = f"{tmp_path}/{{{{run.id}}}}/out.txt"
    spec = (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cached}\ninitial: train\n"
        f"states:\n  train:\n    run: {{shell: 'mkdir -p {tmp_path}/{{{{run.id}}}} && echo 1 > {out}'}}\n"
        f"    outputs: [{{uri: '{out}'}}]\n    cache: true\n    terminal: true\n"
    )
    async with local_harness.worker():
        for name in ("cached-miss", "cached-hit"):
            handle = await local_harness.start(spec, run_id=f"fp-{name}-{uuid.uuid4().hex[:6]}")
            await handle.result()
            assert_pinned(name, fingerprint(await handle.fetch_history()))


async def test_a_run_that_waits_on_its_quota_pool_issues_the_pinned_commands(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = f"fp-pool-{uuid.uuid4().hex[:6]}"
        await set_pool(env.client, pool, PoolConfig(gpus=8), local_harness.task_queue)
        release = tmp_path / "release-the-pool"  # the holder holds until the waiter waits
        holder = await local_harness.start(
            gpu_spec(tmp_path, "h", until=release), quota=QuotaClaim(pool=pool)
        )
        await eventually(
            lambda: held_all(env, pool), timeout=30, interval=0.2, what="the holder holds the pool"
        )
        waiter = await local_harness.start(gpu_spec(tmp_path, "w", seconds=0.2), quota=QuotaClaim(pool=pool))
        await eventually(lambda: waits(env, pool), timeout=30, interval=0.2, what="the waiter waits")
        release.touch()
        await waiter.result()
        await holder.result()
        commands = fingerprint(await waiter.fetch_history())
    # Whether a wait starts its 30 s ask-again timer depends on whether the pool's answer came
    # before the run's next task: the timers are left out, every other command is pinned.
    assert_pinned("quota-waiting", [c for c in commands if not c.endswith(" timer")])


async def held_all(env: WorkflowEnvironment, pool: str) -> bool:
    return (await pool_status(env.client, pool)).in_use == 8


async def waits(env: WorkflowEnvironment, pool: str) -> bool:
    return len((await pool_status(env.client, pool)).waiting) == 1

"""Operators steer runs: pause, resume, cancel (signal and built-in), suspend (DESIGN §3.7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from npaflow.runtime.summary import RunStatusView
from tests.harness import Harness, RunOutcome
from tests.helpers import eventually
from tests.integration.fake_backend import FakeBackend
from workflows_def import PHASE_ATTRIBUTE, STATE_ATTRIBUTE

pytestmark = pytest.mark.integration


async def phase(handle: WorkflowHandle) -> str:
    return (await handle.query("status", result_type=RunStatusView)).phase.value


async def test_pause_stops_new_launches_while_in_flight_waves_finish(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.scripts = [["RUNNING"] * 30 + ["SUCCEEDED"]]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml")
        await eventually(lambda: len(fake.launches) == 1)
        await handle.signal("pause")
        await eventually(_phase_is(handle, "paused"))
        assert len(fake.launches) == 1
        assert (await handle.query("status", result_type=RunStatusView)).waves[0].status == "succeeded"
        await handle.signal("resume")
        outcome = await harness.finish(handle)
    assert outcome.status == "succeeded"
    assert len(fake.launches) == 3


def _phase_is(handle: WorkflowHandle, wanted: str):
    async def check() -> bool:
        return await phase(handle) == wanted

    return check


@pytest.mark.parametrize("how", ["signal", "builtin"])
async def test_cancel_cancels_in_flight_jobs_by_exact_id_and_ends_cancelled(
    harness: Harness, fake: FakeBackend, how: str
) -> None:
    fake.default = ["RUNNING"]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml")
        await eventually(lambda: len(fake.launches) == 1)
        if how == "signal":
            await handle.signal("cancel", "operator said stop")
        else:
            await handle.cancel()
        outcome = await harness.finish(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    assert fake.cancel_calls == ["1"]
    wave = outcome.ledger.waves[0]
    assert wave.cancellation.state.value == "verified"
    assert outcome.ledger.status.value == "cancelled"
    if how == "signal":
        assert outcome.ledger.cancel_reason == "operator said stop"


async def _first_wave_running(harness: Harness, fake: FakeBackend) -> WorkflowHandle:
    """A run whose first wave is launched and stays running."""
    fake.default = ["RUNNING"]
    handle = await harness.start("runtime/fanout.yaml")
    await eventually(lambda: len(fake.launches) == 1)
    return handle


async def _cancelled_by_signals(
    harness: Harness, fake: FakeBackend, *signals: tuple[str, list[object]]
) -> RunOutcome:
    """A run whose first wave runs, sent `signals` (name, inputs) in order; it must end CANCELED."""
    async with harness.worker():
        handle = await _first_wave_running(harness, fake)
        for name, inputs in signals:
            await handle.signal(name, args=inputs)
        outcome = await harness.finish(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    assert fake.cancel_calls == ["1"]
    return outcome


async def test_a_signal_with_too_few_or_too_many_inputs_is_dropped_and_the_run_still_obeys_the_next(
    harness: Harness, fake: FakeBackend
) -> None:
    outcome = await _cancelled_by_signals(
        harness,
        fake,
        ("quota_answer", []),  # it takes one input: a task failing on it failed forever
        ("cancel", ["one reason", "another"]),
        ("cancel", ["operator said stop"]),
    )
    assert outcome.ledger.cancel_reason == "operator said stop"


async def test_a_cancelled_run_is_in_no_state_in_the_temporal_ui_nor_its_status(
    harness: Harness, fake: FakeBackend
) -> None:
    """Filtering the UI by NpaflowState finds open runs only: an ended run's attribute is emptied."""
    fake.default = ["RUNNING"]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml")
        await eventually(lambda: len(fake.launches) == 1)

        async def in_a_state() -> bool:
            return bool((await handle.describe()).typed_search_attributes.get(STATE_ATTRIBUTE))

        await eventually(in_a_state)
        await handle.signal("cancel", "operator said stop")
        await harness.finish(handle)
        described = await handle.describe()
        status = await handle.query("status", result_type=RunStatusView)
    assert not described.typed_search_attributes.get(STATE_ATTRIBUTE)  # emptied: Temporal drops it
    assert (status.phase.value, status.current_states) == ("cancelled", [])


async def test_an_input_sent_with_a_signal_that_takes_none_is_discarded_and_the_signal_obeyed(
    harness: Harness, fake: FakeBackend
) -> None:
    """The SDK hands a handler that takes no input none of what came (the UI's dialog sends `{}`)."""
    async with harness.worker():
        handle = await _first_wave_running(harness, fake)
        await handle.signal("pause", {"reason": "from the UI's signal dialog"})

        async def pause_requested() -> bool:
            return (await handle.query("status", result_type=RunStatusView)).pause_requested

        await eventually(pause_requested)
        await handle.cancel()
        await harness.finish(handle)


async def test_suspend_then_resume_retries_the_failed_wave_as_attempt_two(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.scripts = [["FAILED"]]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml", on_failure="suspend")
        await eventually(_phase_is(handle, "suspended"))
        described = await handle.describe()
        assert described.typed_search_attributes.get(PHASE_ATTRIBUTE) == "suspended"
        await handle.signal("resume")
        outcome = await harness.finish(handle)
    assert outcome.status == "succeeded"
    first = [w for w in outcome.summary.waves if w.key.sequence == 1]
    assert [(w.attempt, w.status.value) for w in first] == [(1, "failed"), (2, "succeeded")]


async def test_suspended_run_can_be_cancelled(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["FAILED"]]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml", on_failure="suspend")
        await eventually(_phase_is(handle, "suspended"))
        await handle.signal("cancel", "giving up")
        await harness.finish(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED


async def test_status_query_reports_waves_and_ledger(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    fake.scripts = [["RUNNING"] * 40 + ["SUCCEEDED"]]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml")
        await eventually(lambda: len(fake.launches) == 1)

        async def launched_view() -> RunStatusView | None:
            view = await handle.query("status", result_type=RunStatusView)
            return view if view.waves and view.waves[0].job_id else None

        view = await eventually(launched_view)
        await harness.finish(handle)
    assert view.phase.value == "running"
    assert view.current_states == ["shard-a", "shard-b"]
    assert view.waves[0].job_id == "1"
    assert view.ledger_uri.endswith(f"/runs/{handle.id}")


async def test_cancel_during_launch_still_cancels_the_launched_job_by_id(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.launch_delay = 1.0
    fake.default = ["RUNNING"]
    async with harness.worker():
        handle = await harness.start("runtime/fanout.yaml")
        await eventually(lambda: fake.submits_started == 1, what="the launch is under way")
        await handle.cancel()
        outcome = await harness.finish(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    assert len(fake.launches) == 1
    assert fake.cancel_calls == ["1"]
    assert outcome.ledger.waves[0].cancellation.state.value == "verified"


async def test_a_cancel_signal_typed_by_hand_with_an_object_cancels_the_run_with_its_reason(
    harness: Harness, fake: FakeBackend
) -> None:
    """`temporal workflow signal --name cancel --input '{"reason": ...}'` stops the run, not nothing."""
    outcome = await _cancelled_by_signals(harness, fake, ("cancel", [{"reason": "over budget"}]))
    assert outcome.ledger.cancel_reason == "over budget"

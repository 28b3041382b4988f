"""The worker's log stays machine-readable: one JSON object per line, the SDK's records included.

A signal whose input does not validate is dropped by the SDK and the run goes on;
the sender's mistake is one warning naming what was wrong, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.request import RunRequest
from tests.harness import start_worker_process
from tests.helpers import eventually
from worker.replay import each, replay
from workflows_def import NpaWorkflowRun

pytestmark = pytest.mark.integration

SLOW = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: slow}
states:
  a:
    run: {shell: sleep 60}
    terminal: true
"""


async def run_sent_malformed_signals(env: WorkflowEnvironment, home: Path, run_id: str) -> Path:
    """A run that was sent two signals it could not read, then cancelled; the worker's log."""
    task_queue = f"tq-log-{uuid.uuid4().hex[:6]}"
    log = home / "worker.log"
    worker = start_worker_process(env, home, task_queue, NPAFLOW_LOG_FORMAT="json")
    try:
        handle = await env.client.start_workflow(
            NpaWorkflowRun.run, RunRequest(spec=SLOW, poll_seconds=0.2), id=run_id, task_queue=task_queue
        )
        await eventually(lambda: "wave.launched" in log.read_text(), timeout=60, what="the wave launched")
        await handle.signal("quota_answer", {"bogus": 1})
        await handle.signal("cache_flight_granted", [1, 2])
        await eventually(lambda: log.read_text().count("dropping the signal") >= 2, what="both dropped")
        assert (await handle.describe()).status.name == "RUNNING"
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), 60)
    finally:
        worker.terminate()
        worker.wait()
    return log


async def test_a_malformed_signal_is_one_json_warning_and_the_run_goes_on(
    env: WorkflowEnvironment, home: Path
) -> None:
    log = await run_sent_malformed_signals(env, home, "rt-log")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    dropped = [r for r in records if "dropping the signal" in r["event"]]
    # A replay of the run (after an eviction) meets the same signals again and says so again.
    assert len(dropped) >= 2 and {r["level"] for r in dropped} == {"warning"}
    assert "invalid LeaseAnswer: granted: Field required" in dropped[0]["event"]
    assert "Traceback" not in log.read_text()


async def test_replaying_a_run_that_dropped_signals_reports_no_stale_errors(
    env: WorkflowEnvironment, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await run_sent_malformed_signals(env, home, "rt-log-replay")
    history = await env.client.get_workflow_handle("rt-log-replay").fetch_history()
    report = await replay(each([history]))
    assert (report.replayed, report.failures) == (1, {})
    assert not [r for r in caplog.records if "dropping the signal" in r.getMessage()]


async def test_a_workflow_type_no_worker_registers_is_one_json_warning_naming_it(
    env: WorkflowEnvironment, home: Path
) -> None:
    task_queue = f"tq-log-{uuid.uuid4().hex[:6]}"
    log = home / "worker.log"
    worker = start_worker_process(env, home, task_queue, NPAFLOW_LOG_FORMAT="json")
    try:
        await env.client.start_workflow("NpaWorkflowRunn", id="rt-typo-type", task_queue=task_queue)
        await eventually(lambda: "is not registered" in log.read_text(), timeout=60, what="the refusal")
        await env.client.get_workflow_handle("rt-typo-type").terminate()
    finally:
        worker.terminate()
        worker.wait()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    unknown = [r for r in records if "is not registered" in r["event"]]
    assert {r["level"] for r in unknown} == {"warning"}
    assert "Workflow class NpaWorkflowRunn is not registered" in unknown[0]["event"]
    assert "temporal workflow terminate" in unknown[0]["event"]
    assert "Traceback" not in log.read_text()

"""Run notifications: a worker with NPAFLOW_NOTIFY_URL posts failed (and, if asked, succeeded) runs.

The worker is a real process whose webhook URL is only in its environment; the
tests read what a local receiver got, the run's ledger, its history and the
worker's log.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.contract import LEDGER_DIR, RUNTIME_FILE, WORKFLOW_TYPE
from tests.harness import Harness, start_worker_process
from tests.helpers import COLD_WORKER_SECONDS, eventually
from tests.skypilot_server import free_port
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration

UI = "http://ui.example:8233"


async def run_on_worker(
    env: WorkflowEnvironment, harness: Harness, tmp_path: Path, webhook: str, spec: str, **options: object
) -> tuple[str, Path, dict[str, Any]]:
    """Run `spec` on a worker process notifying `webhook`; return its outcome, home and ledger."""
    home, queue, run_id = tmp_path / "home", f"tq-{uuid.uuid4().hex[:8]}", f"note-{uuid.uuid4().hex[:6]}"
    worker = start_worker_process(env, home, queue, NPAFLOW_NOTIFY_URL=webhook, NPAFLOW_UI_URL=UI)
    try:
        request = harness.request(spec, vars={"root": str(tmp_path)}, poll_seconds=0.2, **options)
        handle = await env.client.start_workflow(WORKFLOW_TYPE, request, id=run_id, task_queue=queue)
        try:
            status = (await handle.result())["status"]
        except WorkflowFailureError:
            status = "failed"
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    ledger = json.loads((home / "runs" / run_id / LEDGER_DIR / RUNTIME_FILE).read_text())
    return status, home, ledger


async def test_a_failed_runs_notification_arrives_with_what_went_wrong_and_where(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    receiver = Receiver()
    try:
        status, _, ledger = await run_on_worker(
            env, local_harness, tmp_path, receiver.url, "runtime/flaky-last.yaml"
        )
        (note,) = await eventually(lambda: receiver.bodies, what="the notification")
    finally:
        receiver.shutdown()
    assert status == "failed"
    run_id = ledger["run_id"]
    assert note["event"] == "run_failed" and note["run_id"] == run_id
    assert (note["workflow"], note["phase"], note["state"], note["failure_class"]) == (
        "flaky-last",
        "failed",
        "last",
        "payload",
    )
    assert note["wave_key"] == "002|serial|:last:-"
    assert note["error"] and note["error"] in ledger["error"] + note["error"]
    assert note["ledger_uri"].endswith(f"/runs/{run_id}")
    assert note["node_hours"] == pytest.approx(ledger["usage"]["node_hours"], abs=1e-6)
    assert note["ui_url"] == f"{UI}/namespaces/default/workflows/{run_id}"
    assert note["text"].startswith(f"npaflow run {run_id} (flaky-last) failed at state last [payload]")
    (record,) = ledger["notifications"]
    assert (record["event"], record["webhooks"], record["delivered"], record["errors"]) == (
        "run_failed",
        1,
        1,
        [],
    )


async def test_an_unreachable_webhook_changes_nothing_about_the_run_is_recorded_and_never_written_down(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    secret = f"token-{uuid.uuid4().hex}"
    webhook = f"http://127.0.0.1:{free_port()}/hook?secret={secret}"  # nothing listens there
    status, home, ledger = await run_on_worker(
        env, local_harness, tmp_path, webhook, "runtime/flaky-last.yaml"
    )
    assert status == "failed"
    assert ledger["error"].startswith("state last: job ")  # the run's own failure, unchanged
    (record,) = ledger["notifications"]
    assert (record["webhooks"], record["delivered"]) == (1, 0)
    assert record["errors"][0].startswith("webhook 1 of 1: ")
    history = await env.client.get_workflow_handle(ledger["run_id"]).fetch_history()
    written = [
        json.dumps(history.to_json_dict()),
        *(p.read_text() for p in (home / "runs" / ledger["run_id"]).rglob("*") if p.is_file()),
        (home / "worker.log").read_text(),
    ]
    assert [text for text in written if secret in text or "127.0.0.1:" + webhook.split(":")[2] in text] == []


async def test_success_is_posted_only_when_the_run_asks_for_always(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    receiver = Receiver()
    try:
        quiet, _, quiet_ledger = await run_on_worker(
            env, local_harness, tmp_path / "a", receiver.url, "runtime/local-steps.yaml"
        )
        loud, _, _ = await run_on_worker(
            env, local_harness, tmp_path / "b", receiver.url, "runtime/local-steps.yaml", notify="always"
        )
        (note,) = await eventually(lambda: receiver.bodies, what="the success notification")
    finally:
        receiver.shutdown()
    assert (quiet, loud) == ("succeeded", "succeeded")
    assert quiet_ledger["notifications"] == []
    assert (note["event"], note["phase"], note["state"], note["error"]) == (
        "run_succeeded",
        "succeeded",
        "",
        "",
    )


async def test_a_suspended_run_says_so_and_its_ledger_records_the_delivery_while_it_waits(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    receiver = Receiver()
    home, queue = tmp_path / "home", f"tq-{uuid.uuid4().hex[:8]}"
    worker = start_worker_process(env, home, queue, NPAFLOW_NOTIFY_URL=receiver.url)
    runtime = home / "runs" / "note-suspended" / LEDGER_DIR / RUNTIME_FILE
    try:
        request = local_harness.request(
            "runtime/flaky-last.yaml", vars={"root": str(tmp_path)}, poll_seconds=0.2, on_failure="suspend"
        )
        handle = await env.client.start_workflow(
            WORKFLOW_TYPE, request, id="note-suspended", task_queue=queue
        )
        (note,) = await eventually(
            lambda: receiver.bodies, timeout=COLD_WORKER_SECONDS, what="the suspension notification"
        )

        def recorded() -> list[dict[str, Any]]:
            return json.loads(runtime.read_text()).get("notifications", []) if runtime.exists() else []

        (record,) = await eventually(recorded, what="the delivery in the ledger")
        await handle.cancel()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        receiver.shutdown()
    assert (note["event"], note["phase"], note["state"]) == ("run_suspended", "suspended", "last")
    assert note["text"].startswith("npaflow run note-suspended (flaky-last) is suspended, waiting for resume")
    assert (record["event"], record["delivered"]) == ("run_suspended", 1)

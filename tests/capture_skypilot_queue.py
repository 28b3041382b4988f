"""Capture what a real SkyPilot API server answers for a FAILED_PRECHECKS job, for the fake's contract test.

    python -m tests.capture_skypilot_queue

Starts an API server of this venv's release (consolidation mode, no cloud),
launches one single-task job through the SDK the way the skypilot backend does,
waits for it to end, and writes its queue_v2 record (the backend's QUEUE_FIELDS)
to tests/fixtures/skypilot/queue_v2_failed_prechecks-<release>.json, which
tests/unit/test_skypilot_contract.py holds the fake to.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from activities.backends.skypilot import QUEUE_FIELDS
from activities.backends.skypilot_sdk import SkyPilotSdk
from tests.skypilot_releases import FIXTURES, installed_version
from tests.skypilot_server import SkyApiServer, host_turn

TASK_YAML = "name: capture-01-step\nrun: echo hi\n_metadata:\n  npaflow_launch_token: npa-launch-capture\n"


async def capture(endpoint: str) -> dict[str, object]:
    sdk = SkyPilotSdk(endpoint)
    request_id = await sdk.launch(TASK_YAML, "capture-01-step", {})
    try:
        await sdk.get(request_id)
    except Exception as exc:  # noqa: BLE001 (a cloud-less launch fails; its record is what we want)
        print(f"launch ended with {type(exc).__name__}")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        (record,) = await sdk.queue(job_ids=None, limit=1, fields=QUEUE_FIELDS)
        if record.status is not None and record.status.is_terminal():
            return dict(record.model_dump(mode="json"))
        await asyncio.sleep(2)
    raise RuntimeError("the capture job did not end within 300 s")


def main() -> None:
    with host_turn():
        server = SkyApiServer(Path(tempfile.mkdtemp(prefix="npa-sky-capture-")))
        server.start()
        try:
            record = asyncio.run(capture(server.endpoint))
        finally:
            server.stop()
    target = FIXTURES / f"queue_v2_failed_prechecks-{installed_version()}.json"
    target.write_text(json.dumps([record], indent=2) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()

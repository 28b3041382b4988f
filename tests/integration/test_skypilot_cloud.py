"""The fan-out example on a real cloud through a SkyPilot API server that has cloud access.

Opt-in: NPAFLOW_LIVE_SKYPILOT=1, SKYPILOT_API_SERVER_ENDPOINT (that server), and
NPAFLOW_LIVE_ROOT, a directory both the jobs and this machine see (a mounted
bucket or shared file system); NPAFLOW_LIVE_INFRA optionally pins the infra.
It launches real (CPU) jobs and costs money.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.backends.skypilot import SkyPilotBackend
from activities.backends.skypilot_sdk import SkyPilotSdk
from tests.harness import Harness
from tests.helpers import EXAMPLES

LIVE = os.environ.get("NPAFLOW_LIVE_SKYPILOT") == "1"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not LIVE,
        reason="live cloud test: set NPAFLOW_LIVE_SKYPILOT=1, SKYPILOT_API_SERVER_ENDPOINT "
        "and NPAFLOW_LIVE_ROOT to run the fan-out example on a real cloud",
    ),
]


async def test_the_fan_out_example_runs_on_a_real_cloud(env: WorkflowEnvironment, home: Path) -> None:
    root = Path(os.environ["NPAFLOW_LIVE_ROOT"])
    harness = Harness(
        env.client,
        home,
        SkyPilotBackend(SkyPilotSdk(os.environ["SKYPILOT_API_SERVER_ENDPOINT"])),
        f"tq-live-{uuid.uuid4().hex[:6]}",
    )
    outcome = await harness.run(
        (EXAMPLES / "fan-out-join.yaml").read_text(),
        backend="skypilot",
        vars={"root": str(root)},
        poll_seconds=15,
        max_wait_seconds=3600,
        infra=os.environ.get("NPAFLOW_LIVE_INFRA", ""),
    )
    assert outcome.status == "succeeded", outcome.error
    shards, _join = outcome.ledger.waves
    assert shards.max_concurrent_observed == 3
    run = outcome.handle.id
    assert (root / run / "joined.txt").read_text().count("rows of shard") == 3

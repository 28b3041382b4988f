"""The SkyPilot fake is held to SkyPilot's own models and to what the real server returned.

tests/fixtures/skypilot/queue_v2_failed_prechecks-<release>.json is captured
(`python -m tests.capture_skypilot_queue`) from a real API server of the
installed release (consolidation mode, no cloud) asked for the backend's
QUEUE_FIELDS, so the fake is compared with the records of the SkyPilot it is
built from; the live tests check the same against running servers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("sky", reason="install the 'skypilot' extra")

import sky
from sky.jobs.state import ManagedJobStatus
from sky.schemas.api.responses import ManagedJobRecord

from activities.backends.skypilot import QUEUE_FIELDS, SkyPilotBackend, task_row
from activities.backends.skypilot_errors import failure_reason_class
from npaflow.runtime.status import JobStatus
from tests.helpers import ROOT
from tests.integration.fake_skypilot import FakeSkyPilotApi, statuses

pytestmark = pytest.mark.unit

CAPTURED = ROOT / "tests" / "fixtures" / "skypilot" / f"queue_v2_failed_prechecks-{sky.__version__}.json"
#: Filled only once the job has reached them (the captured job never ran).
FILLED_LATER = {"start_at", "current_cluster_name"}


def filled(record: dict[str, Any]) -> set[str]:
    return {key for key, value in record.items() if value is not None}


async def fake_failed_prechecks() -> list[ManagedJobRecord]:
    api = FakeSkyPilotApi(
        default=[statuses("FAILED_PRECHECKS")],
        failure_reasons={1: "[sky.exceptions.NoCloudAccessError] Cloud access is not set up."},
    )
    yaml_text = (
        "name: x-01-step\nexecution: serial\n---\nname: step\nrun: echo hi\n"
        "_metadata:\n  npaflow_launch_token: tok\n"
    )
    await api.get(await api.launch(yaml_text, "x-01-step", {}))
    return await api.queue(job_ids=[1], limit=None, fields=QUEUE_FIELDS)


def test_the_backend_asks_only_for_fields_skypilot_knows() -> None:
    assert set(QUEUE_FIELDS) <= set(ManagedJobRecord.model_fields)


async def test_fake_rows_are_skypilot_records_filled_like_the_real_server_fills_them() -> None:
    assert CAPTURED.exists(), (
        f"capture SkyPilot {sky.__version__}'s record: python -m tests.capture_skypilot_queue"
    )
    (real,) = json.loads(CAPTURED.read_text())
    (fake,) = await fake_failed_prechecks()
    assert isinstance(fake, ManagedJobRecord)
    assert set(fake.model_dump()) == set(real)  # every one of SkyPilot's keys, none invented
    assert filled(fake.model_dump(mode="json")) - FILLED_LATER == filled(real) - FILLED_LATER
    assert isinstance(fake.status, ManagedJobStatus)
    assert fake.task_name == fake.job_name  # a single task takes the job's name, as for real


class _Reads:
    """A record that remembers which fields were read."""

    def __init__(self, record: ManagedJobRecord) -> None:
        self._record, self.read = record, set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._record, name)


async def test_every_field_the_backend_reads_is_one_it_asks_for() -> None:
    reads = [_Reads(record) for record in await fake_failed_prechecks()]
    for record in reads:
        task_row(record)  # type: ignore[arg-type]

    class Api(FakeSkyPilotApi):
        async def queue(self, **kwargs: Any) -> list[Any]:
            return reads

    await SkyPilotBackend(Api()).find_jobs("x-01-step")
    assert set().union(*(r.read for r in reads)) <= set(QUEUE_FIELDS)


def test_real_rows_map_to_task_rows_with_the_failure_class_in_the_reason() -> None:
    (real,) = json.loads(CAPTURED.read_text())
    row = task_row(ManagedJobRecord(**real))
    assert (row.job_id, row.task_id, row.status) == (str(real["job_id"]), 0, JobStatus.FAILED_PRECHECKS)
    assert "\x1b" not in row.failure_reason
    assert failure_reason_class(row.failure_reason) == "NoCloudAccessError"


@pytest.mark.parametrize("status", list(ManagedJobStatus))
def test_every_skypilot_status_has_a_meaning_here(status: ManagedJobStatus) -> None:
    parsed = JobStatus.parse(status.value)
    assert parsed is not JobStatus.UNKNOWN
    assert parsed.is_terminal() == status.is_terminal()

"""Fan-outs of any width finish with bounded history, each member launched once (issue 59).

A 1,000-item list with `maxConcurrency: 50` runs on the local backend; a
200-item one continues as new mid-group on a server that suggests it early. The
payload audit (tests/payload_audit.py) checks every payload of every run here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.backends.local import LocalBackend
from npaflow.fanout import MembersDocument
from tests.e2e.test_wide_runs import executions, run_by_uri, views_agree
from tests.harness import WORKER_ID, Harness
from tests.payload_audit import oversized_payloads
from tests.spec_factory import fan_out_group

pytestmark = pytest.mark.e2e


def each_once(root: Path, run_id: str, items: int) -> None:
    files = sorted(root.glob(f"{run_id}-item-*.txt"))
    assert len(files) == items
    assert all(len(f.read_text().splitlines()) == 1 for f in files)  # no member launched twice


async def test_a_1000_item_fan_out_of_batches_of_50_completes_each_member_once_and_every_view_agrees(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        outcome = await run_by_uri(
            local_harness, fan_out_group(tmp_path, 1000, batch=50), tmp_path, "fan-1000"
        )
        assert outcome.status == "succeeded", outcome.error
        await views_agree(env, local_harness, outcome)
    each_once(tmp_path, "fan-1000", 1000)
    assert outcome.ledger is not None
    assert len([w for w in outcome.ledger.waves if w.key.group == "work"]) == 20
    (record,) = outcome.ledger.fan_outs.values()
    members = MembersDocument.model_validate_json(
        Path(record.members_uri.removeprefix("file://")).read_text()
    )
    assert (record.count, record.succeeded, members.succeeded) == (1000, 1000, 1000)


async def test_a_fan_out_that_continues_as_new_mid_group_launches_each_member_once(
    short_histories: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    harness = Harness(short_histories.client, home, LocalBackend(home, WORKER_ID), "tq-fan-mid-group")
    async with harness.worker():
        outcome = await run_by_uri(harness, fan_out_group(tmp_path, 200, batch=40), tmp_path, "fan-mid")
        assert outcome.status == "succeeded", outcome.error
    assert await executions(harness, outcome.handle) > 1
    each_once(tmp_path, "fan-mid", 200)
    assert outcome.ledger is not None and all(wave.attempt == 1 for wave in outcome.ledger.waves)
    (record,) = outcome.ledger.fan_outs.values()
    assert (record.count, record.succeeded, record.ended) == (200, 200, True)
    assert not await oversized_payloads(short_histories.client, since)

"""Runs of any width finish: a 1,000-member group's result stays under Temporal's payload limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING
from tests.harness import Harness
from tests.spec_factory import wide_group

pytestmark = pytest.mark.integration


async def test_a_1000_member_group_with_long_names_params_and_outputs_completes_with_a_bounded_result(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(wide_group(tmp_path, 1000), max_concurrency=50, poll_seconds=0.2)
        outcome = await local_harness.finish(handle)
        result = await local_harness.client.get_workflow_handle(handle.id).fetch_history()
    assert outcome.status == "succeeded", outcome.error
    assert outcome.summary is not None and outcome.summary.wave_count == 21
    assert outcome.summary.waves_omitted > 0 and len(outcome.summary.waves) < 21
    assert outcome.summary.states_omitted > 0
    assert len(outcome.summary.usage.by_state) + outcome.summary.states_omitted == 1001  # and done
    completed = [e for e in result.events if e.HasField("workflow_execution_completed_event_attributes")]
    (done,) = completed
    size = sum(len(p.data) for p in done.workflow_execution_completed_event_attributes.result.payloads)
    parts = {
        k: len(json.dumps(v))
        for k, v in json.loads(
            done.workflow_execution_completed_event_attributes.result.payloads[0].data
        ).items()
    }
    assert size < TEMPORAL_PAYLOAD_WARNING, str(sorted(parts.items(), key=lambda kv: -kv[1])[:6])
    assert outcome.ledger is not None and len(outcome.ledger.waves) == 21
    assert len(list(tmp_path.glob("*-shard-*.txt"))) == 1000

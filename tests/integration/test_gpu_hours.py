"""GPU-hours per state and per run match the job timelines the ledger recorded (failed attempts too)."""

from __future__ import annotations

import calendar
import json
import time
from pathlib import Path

import pytest

from tests.harness import Harness

pytestmark = pytest.mark.integration

#: (GPUs per node, nodes) of each state of runtime/gpu-sweep.yaml, read off the spec by hand.
SHAPES = {"lr-1": (2, 1), "lr-2": (2, 1), "evaluate": (1, 2)}


def epoch(timestamp: str) -> int:
    return calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))


async def test_gpu_hours_per_state_and_run_match_the_task_timelines(
    local_harness: Harness, tmp_path: Path
) -> None:
    outcome = await local_harness.run(
        "runtime/gpu-sweep.yaml", vars={"root": str(tmp_path)}, retries=1, poll_seconds=0.2
    )
    assert outcome.status == "succeeded" and outcome.ledger is not None
    expected: dict[str, float] = {}
    failed = 0.0
    for wave in outcome.ledger.waves:
        for row in wave.tasks:
            state = wave.states[row.task_id]
            gpus, nodes = SHAPES[state]
            hours = (epoch(row.end_at) - epoch(row.start_at)) / 3600 * gpus * nodes
            expected[state] = expected.get(state, 0.0) + hours
            if wave.status != "succeeded":
                failed += hours
    usage = outcome.ledger.usage
    assert set(usage.by_state) == set(SHAPES)
    for state, hours in expected.items():
        assert usage.by_state[state].gpu_hours == pytest.approx(hours, abs=1e-4), state
    assert usage.gpu_hours == pytest.approx(sum(expected.values()), abs=1e-4)
    assert usage.failed_gpu_hours == pytest.approx(failed, abs=1e-4)
    assert failed > 0 and usage.by_state["evaluate"].failed_gpu_hours > 0
    assert usage.by_state["lr-2"].gpu_hours >= 2 * 2 / 3600  # sleep 3 on 2 GPUs: at least 2 s seen
    assert outcome.summary is not None and outcome.summary.usage == usage
    assert any(line.startswith("gpu_hours: ") for line in outcome.summary.text_lines())
    status = json.loads(
        (local_harness.home / "runs" / outcome.handle.id / "npa-workflow" / "status.json").read_text()
    )
    assert status["usage"]["gpu_hours"] == usage.gpu_hours

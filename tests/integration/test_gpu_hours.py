"""GPU-hours per state and per run match the job timelines the ledger recorded (failed attempts too)."""

from __future__ import annotations

import asyncio
import calendar
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from npaflow.cli.clock import utc_now_text
from npaflow.runtime.contract import STATUS_QUERY, RunMemo
from npaflow.runtime.summary import RunStatusView
from tests.harness import Harness
from tests.helpers import eventually

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


def two_gpu_sleep(seconds: int) -> str:
    """One state whose task holds 2 GPUs (by its shape: the local backend runs it as a process)."""
    return json.dumps(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "two-gpus"},
            "resources": {"gpu": {"accelerators": "H100:2"}},
            "initial": "train",
            "states": {"train": {"run": {"shell": f"sleep {seconds}"}, "resources": "gpu", "terminal": True}},
        }
    )


async def spend(handle: object, now: str) -> float:
    view = await handle.query(STATUS_QUERY, now, result_type=RunStatusView)  # type: ignore[attr-defined]
    return float(view.usage.gpu_hours)


async def test_a_running_jobs_spend_grows_and_a_cancelled_one_counts_in_every_surface(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(two_gpu_sleep(120), poll_seconds=0.2)
        await eventually(
            lambda: any(w.job_id for w in (ledger_waves(local_harness, handle.id))), what="the job launched"
        )
        launched = time.time()
        await asyncio.sleep(3)
        first = await spend(handle, utc_now_text())
        await asyncio.sleep(2)
        second = await spend(handle, utc_now_text())
        await asyncio.sleep(max(0.0, launched + 10 - time.time()))
        await handle.cancel()
        outcome = await local_harness.finish(handle)
        memo = RunMemo.read(await (await handle.describe()).memo())
    assert 0 < first < second, (first, second)
    assert second - first == pytest.approx(2 * 2 / 3600, abs=2 * 1.5 / 3600)  # 2 GPUs for ~2 s
    assert outcome.ledger is not None
    (wave,) = outcome.ledger.waves
    assert wave.status == "cancelled" and wave.tasks and wave.tasks[0].start_at
    recorded = outcome.ledger.usage.gpu_hours
    assert recorded == pytest.approx(2 * 10 / 3600, abs=2 * 4 / 3600), recorded  # about 2 GPUs x 10 s
    assert round(wave.gpu_hours, 4) == round(recorded, 4)
    assert memo.gpu_hours is not None and round(memo.gpu_hours, 4) == round(recorded, 4)  # what list shows


def ledger_waves(harness: Harness, run_id: str) -> list:
    path = harness.home / "runs" / run_id / "npa-workflow" / "runtime.json"
    if not path.exists():
        return []
    return [SimpleNamespace(**wave) for wave in json.loads(path.read_text())["waves"]]

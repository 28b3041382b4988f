"""A worker's /metrics, scraped by Debian's Prometheus: run outcomes and hours as the ledgers say.

Runs a succeeding and a failing spec on a worker process with
NPAFLOW_METRICS_ADDRESS, then asks Prometheus' HTTP API for npaflow's counters
and checks them against values computed from the ledgers; the Temporal SDK's
own worker metrics are on the same endpoint.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.contract import LEDGER_DIR, RUNTIME_FILE, WORKFLOW_TYPE
from tests.harness import Harness, start_worker_process
from tests.helpers import eventually, require_tool
from tests.skypilot_server import free_port

pytestmark = pytest.mark.integration


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def query(port: int, expression: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?query={urllib.parse.quote(expression)}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())["data"]["result"]


def ledger_hours(home: Path, run_id: str) -> tuple[float, float]:
    runtime = json.loads((home / "runs" / run_id / LEDGER_DIR / RUNTIME_FILE).read_text())
    waves = runtime["waves"]
    return sum(w.get("gpu_hours", 0.0) for w in waves), sum(w.get("node_hours", 0.0) for w in waves)


async def test_prometheus_scrapes_run_outcomes_hours_and_the_sdk_metrics_from_a_worker(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    prometheus_bin = require_tool("prometheus", package="prometheus")
    metrics_port, prometheus_port = free_port(), free_port()
    home, queue = tmp_path / "home", f"tq-{uuid.uuid4().hex[:8]}"
    worker = start_worker_process(env, home, queue, NPAFLOW_METRICS_ADDRESS=f"127.0.0.1:{metrics_port}")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s}\nscrape_configs:\n"
        f"  - job_name: npaflow\n    static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]\n"
    )
    prometheus = subprocess.Popen(
        [
            prometheus_bin,
            f"--config.file={config}",
            f"--web.listen-address=127.0.0.1:{prometheus_port}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        runs = {
            "metrics-ok": ("runtime/local-steps.yaml", {"root": str(tmp_path), "sleep": "2"}),
            "metrics-bad": ("runtime/flaky-last.yaml", {"root": str(tmp_path)}),
        }
        handles = [
            await env.client.start_workflow(
                WORKFLOW_TYPE,
                local_harness.request(spec, vars=variables, poll_seconds=0.2),
                id=run_id,
                task_queue=queue,
            )
            for run_id, (spec, variables) in runs.items()
        ]
        await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)
        text = await asyncio.to_thread(scrape, metrics_port)
        assert 'npaflow_runs_finished_total{outcome="succeeded",spec="local-steps"} 1.0' in text
        assert 'npaflow_runs_finished_total{outcome="failed",spec="flaky-last"} 1.0' in text
        assert "temporal_workflow_completed_total" in text or "temporal_request_total" in text
        assert "metrics-ok" not in text and "w1-" not in text  # no run or job ids as labels

        async def scraped() -> list[dict]:  # a scrape taken after both runs ended
            finished = await asyncio.to_thread(query, prometheus_port, "npaflow_runs_finished_total")
            return finished if len(finished) == 2 else []

        finished = await eventually(scraped, timeout=60, interval=1, what="Prometheus scraped both outcomes")
        outcomes = {(f["metric"]["spec"], f["metric"]["outcome"]): float(f["value"][1]) for f in finished}
        assert outcomes == {("local-steps", "succeeded"): 1.0, ("flaky-last", "failed"): 1.0}
        for run_id, (spec, _) in runs.items():
            gpu, node = ledger_hours(home, run_id)
            spec_name = Path(spec).stem
            (node_total,) = query(prometheus_port, f'sum(npaflow_node_hours_total{{spec="{spec_name}"}})')
            (gpu_total,) = query(prometheus_port, f'sum(npaflow_gpu_hours_total{{spec="{spec_name}"}})')
            hours_lines = [line for line in text.splitlines() if "hours" in line and not line.startswith("#")]
            assert node > 0 or run_id != "metrics-ok", hours_lines  # it slept 2 s: not 0 == 0
            assert float(node_total["value"][1]) == pytest.approx(node, abs=2e-6), hours_lines  # rounded
            assert float(gpu_total["value"][1]) == pytest.approx(gpu, abs=2e-6)
        assert query(prometheus_port, "temporal_request_total") or query(
            prometheus_port, "temporal_workflow_completed_total"
        )
    finally:
        prometheus.terminate()
        worker.terminate()
        prometheus.wait(timeout=30)
        worker.wait(timeout=30)

"""A worker's /metrics, scraped by Debian's Prometheus: run outcomes and hours as the ledgers say.

Runs a succeeding, a failing and a suspended spec on a worker process with
NPAFLOW_METRICS_ADDRESS, then asks Prometheus' HTTP API for npaflow's counters
and checks them against values computed from the ledgers; the Temporal SDK's
own worker metrics are on the same endpoint. Prometheus evaluates the shipped
alert rules and Debian's Alertmanager delivers the failed run's alert to a
local webhook receiver.
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
from tests.helpers import ROOT, eventually, require_tool
from tests.skypilot_server import free_port
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def query(port: int, expression: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?query={urllib.parse.quote(expression)}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())["data"]["result"]


def start_alertmanager(tmp_path: Path, port: int, receiver: Receiver) -> subprocess.Popen[bytes]:
    """Debian's Alertmanager on loopback (no cluster port), routing everything to `receiver` at once."""
    binary = require_tool("prometheus-alertmanager", package="prometheus-alertmanager")
    config = tmp_path / "alertmanager.yml"
    config.write_text(
        "route: {receiver: hook, group_wait: 1s, group_interval: 1s, repeat_interval: 1h}\n"
        f"receivers: [{{name: hook, webhook_configs: [{{url: '{receiver.url}'}}]}}]\n"
    )
    return subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
            f"--storage.path={tmp_path / 'alertmanager'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def ledger_hours(home: Path, run_id: str) -> tuple[float, float]:
    runtime = json.loads((home / "runs" / run_id / LEDGER_DIR / RUNTIME_FILE).read_text())
    waves = runtime["waves"]
    return sum(w.get("gpu_hours", 0.0) for w in waves), sum(w.get("node_hours", 0.0) for w in waves)


async def test_prometheus_scrapes_run_outcomes_hours_and_the_sdk_metrics_from_a_worker(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    prometheus_bin = require_tool("prometheus", package="prometheus")
    metrics_port, prometheus_port, alertmanager_port = free_port(), free_port(), free_port()
    home, queue = tmp_path / "home", f"tq-{uuid.uuid4().hex[:8]}"
    worker = start_worker_process(env, home, queue, NPAFLOW_METRICS_ADDRESS=f"127.0.0.1:{metrics_port}")
    receiver = Receiver()
    alertmanager = start_alertmanager(tmp_path, alertmanager_port, receiver)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{ROOT / 'docs/monitoring/alerts.yml'}']\n"
        "alerting: {alertmanagers: [{static_configs: [{targets: "
        f"['127.0.0.1:{alertmanager_port}']}}]}}]}}\n"
        "scrape_configs:\n"
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
        suspended = await env.client.start_workflow(
            WORKFLOW_TYPE,
            local_harness.request(
                "runtime/flaky-last.yaml",
                vars={"root": str(tmp_path)},
                poll_seconds=0.2,
                on_failure="suspend",
            ),
            id="metrics-suspended",
            task_queue=queue,
        )
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

        async def suspended_counted() -> list[dict]:
            return await asyncio.to_thread(query, prometheus_port, "npaflow_runs_suspended > 0")

        (gauge,) = await eventually(
            suspended_counted, timeout=60, interval=1, what="the suspended run counted"
        )
        assert (gauge["metric"]["spec"], gauge["value"][1]) == ("flaky-last", "1")
        (in_flight,) = query(prometheus_port, 'npaflow_jobs_in_flight{backend="local"}')
        assert in_flight["value"][1] == "0"  # every await has ended

        def failed_alert() -> list[dict]:
            return [
                alert
                for body in receiver.bodies
                for alert in body.get("alerts", [])
                if alert["labels"].get("alertname") == "NpaflowRunFailed"
            ]

        (alert,) = await eventually(
            failed_alert, timeout=90, interval=1, what="the failed run's alert delivered"
        )
        assert alert["labels"]["spec"] == "flaky-last" and alert["status"] == "firing"
        assert alert["annotations"]["summary"] == "a run of flaky-last failed"
        await suspended.cancel()
    finally:
        for process in (prometheus, alertmanager, worker):
            process.terminate()
        for process in (prometheus, alertmanager, worker):
            process.wait(timeout=30)
        receiver.shutdown()

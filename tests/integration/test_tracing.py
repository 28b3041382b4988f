"""Tracing: with the SDK's OpenTelemetry interceptor, a run's start, workflow and activities are one trace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.testing import WorkflowEnvironment

from npaflow.temporal.data_converter import DATA_CONVERTER
from tests.harness import Harness
from tests.helpers import ROOT

pytestmark = pytest.mark.integration


async def test_a_runs_start_workflow_and_activities_share_one_trace_with_the_wave_key(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    client = await Client.connect(
        env.client.service_client.config.target_host,
        data_converter=DATA_CONVERTER,
        interceptors=[TracingInterceptor(provider.get_tracer("test"))],
    )
    traced = Harness(client, local_harness.home, local_harness.backend, local_harness.task_queue)
    outcome = await traced.run(
        "runtime/local-steps.yaml", run_id="traced-run", vars={"root": str(tmp_path), "sleep": "0"}
    )
    assert outcome.status == "succeeded"
    finished = spans.get_finished_spans()
    names = {span.name for span in finished}
    assert {"StartWorkflow:NpaWorkflowRun", "RunWorkflow:NpaWorkflowRun"} <= names
    assert {"RunActivity:launch_wave", "RunActivity:await_wave"} <= names
    assert len({span.context.trace_id for span in finished}) == 1  # one trace, submit to activities
    launches = [s for s in finished if s.name == "RunActivity:launch_wave"]
    keys = sorted(str(s.attributes.get("npaflow.wave_key")) for s in launches)
    assert keys == ["001|serial|:first:-", "002|serial|:slow:-", "003|serial|:last:-"]
    assert {s.attributes.get("npaflow.run_id") for s in launches} == {"traced-run"}


def test_tracing_is_off_unless_the_otel_variables_ask_for_it() -> None:
    script = (
        "from npaflow.temporal.tracing import tracing_interceptors as t\n"
        "import os, json\n"
        "off = t('npaflow-cli')\n"
        "os.environ['OTEL_TRACES_EXPORTER'] = 'console'\n"
        "on = t('npaflow-cli')\n"
        "print(json.dumps([len(off), type(on[0]).__name__]))\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=environ, check=True
    )
    assert result.stdout.strip() == '[0, "TracingInterceptor"]'

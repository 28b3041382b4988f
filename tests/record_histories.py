"""Record workflow histories of the example specs for the replay test.

Run after any intended change to NpaWorkflowRun's command sequence:
    python tests/record_histories.py
It runs every example on the local backend against a throwaway dev server and
writes tests/histories/<example>.json. `--only mid-group` records just the run
that continues as new between two batches of a group (a dev server that suggests
continue-as-new at 60 events): each of its executions, `mid-group-<n>.json`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from npaflow.temporal.data_converter import DATA_CONVERTER

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.backends.local import LocalBackend  # noqa: E402
from activities.context import ActivityContext  # noqa: E402
from npaflow.runtime.request import BackendName, RunRequest  # noqa: E402
from tests.spec_factory import wide_group  # noqa: E402
from worker.main import running_workers  # noqa: E402
from workflows_def import SEARCH_ATTRIBUTE_KEYS, NpaWorkflowRun  # noqa: E402


async def dev_server(*extra_args: str) -> WorkflowEnvironment:
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER,
        dev_server_log_level="error",
        ui=False,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
        dev_server_extra_args=list(extra_args),
    )


def recording_context(home: Path, queue: str) -> ActivityContext:
    return ActivityContext(
        home=home, backends={BackendName.LOCAL: LocalBackend(home, "rec")}, worker_id="rec", task_queue=queue
    )


async def record_mid_group(out: Path) -> None:
    """200 members (their spec loaded in parts), 40 at a time: the run continues as new mid-group."""
    env = await dev_server("--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=60")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        queue = f"record-{uuid.uuid4().hex[:6]}"
        spec = home / "mid-group.json"
        spec.write_text(wide_group(home, 200, batch=40))
        async with running_workers(env.client, recording_context(home, queue)):
            request = RunRequest(spec="", spec_uri=spec.as_uri(), poll_seconds=0.2)
            handle = await env.client.start_workflow(
                NpaWorkflowRun.run, request, id="history-mid-group", task_queue=queue
            )
            await handle.result()
            runs = [run.run_id async for run in env.client.list_workflows("WorkflowId = 'history-mid-group'")]
            for number, execution in enumerate(reversed(runs), 1):
                history = await env.client.get_workflow_handle(handle.id, run_id=execution).fetch_history()
                (out / f"mid-group-{number}.json").write_text(history.to_json())
                print(f"recorded mid-group-{number}: {len(history.events)} events")
    await env.shutdown()


async def main() -> None:
    out = ROOT / "tests" / "histories"
    out.mkdir(exist_ok=True)
    if sys.argv[1:] == ["--only", "mid-group"]:
        await record_mid_group(out)
        return
    await record_mid_group(out)
    env = await dev_server()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        queue = f"record-{uuid.uuid4().hex[:6]}"
        async with running_workers(env.client, recording_context(home, queue)):
            for spec in sorted((ROOT / "specs" / "examples").glob("*.yaml")):
                request = RunRequest(
                    spec=spec.read_text(), poll_seconds=0.2, vars={"root": str(home / "out")}
                )
                handle = await env.client.start_workflow(
                    NpaWorkflowRun.run, request, id=f"history-{spec.stem}", task_queue=queue
                )
                await handle.result()
                history = await handle.fetch_history()
                (out / f"{spec.stem}.json").write_text(history.to_json())
                print(f"recorded {spec.stem}: {len(history.events)} events")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())

"""Record workflow histories of the example specs for the replay test.

Run after any intended change to NpaWorkflowRun's command sequence:
    python tests/record_histories.py
It runs every example on the local backend against a throwaway dev server and
writes tests/histories/<example>.json.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from npaflow.cli.data_converter import DATA_CONVERTER

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.backends.local import LocalBackend  # noqa: E402
from activities.context import ActivityContext  # noqa: E402
from npaflow.runtime.request import BackendName, RunRequest  # noqa: E402
from worker.main import running_workers  # noqa: E402
from workflows_def import SEARCH_ATTRIBUTE_KEYS, NpaWorkflowRun  # noqa: E402


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER,
        dev_server_log_level="error",
        ui=False,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
    )
    out = ROOT / "tests" / "histories"
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        queue = f"record-{uuid.uuid4().hex[:6]}"
        context = ActivityContext(
            home=home,
            backends={BackendName.LOCAL: LocalBackend(home, "rec")},
            worker_id="rec",
            task_queue=queue,
        )
        async with running_workers(env.client, context):
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

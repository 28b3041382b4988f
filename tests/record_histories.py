"""Record workflow histories of the example specs for the replay test.

Run after any intended change to NpaWorkflowRun's command sequence:
    python tests/record_histories.py
It runs every example on the local backend against a throwaway dev server and
writes tests/histories/<example>.json. `--only mid-group` records just the run
that continues as new between two batches of a group (a dev server that suggests
continue-as-new at 60 events): each of its executions, `mid-group-<n>.json`.
`--only coordinators` records a cached run's miss and hit, its cache flight, and a
run that waited on a quota pool with the pool; `--only pool` a pool that continued
as new, each execution.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.dev_server import DEV_SERVER_FLAGS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.backends.local import LocalBackend  # noqa: E402
from activities.context import ActivityContext  # noqa: E402
from npaflow.quota import PoolConfig, PoolStatus, QuotaClaim  # noqa: E402
from npaflow.quota.messages import pool_workflow_id  # noqa: E402
from npaflow.runtime.cache.messages import FLIGHT_WORKFLOW_TYPE  # noqa: E402
from npaflow.runtime.contract import HELPER_DIVISION  # noqa: E402
from npaflow.runtime.request import BackendName, RunRequest  # noqa: E402
from npaflow.temporal.pools import pool_status, set_pool  # noqa: E402
from tests.spec_factory import gpu_spec, wide_group  # noqa: E402
from worker.main import running_workers  # noqa: E402
from workflows_def import SEARCH_ATTRIBUTE_KEYS, NpaWorkflowRun  # noqa: E402


async def dev_server(*extra_args: str) -> WorkflowEnvironment:
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER,
        dev_server_log_level="error",
        ui=False,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
        dev_server_extra_args=[*DEV_SERVER_FLAGS, *extra_args],
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


async def record_coordinators(out: Path) -> None:
    """A cached run's miss and hit, its cache flight, a run that waited on a quota pool and the pool."""
    env = await dev_server()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        queue = f"record-{uuid.uuid4().hex[:6]}"
        async with running_workers(env.client, recording_context(home, queue)):
            for run_id in ("cached-miss", "cached-hit"):
                await record_run(env.client, out, queue, one_cached_stage(home), run_id)
            flights = (
                f"WorkflowType = '{FLIGHT_WORKFLOW_TYPE}' AND TemporalNamespaceDivision = '{HELPER_DIVISION}'"
            )
            async for flight in env.client.list_workflows(flights):
                await record(env.client, out, "cache-flight", flight.id, flight.run_id)
            pool = "record-pool"
            await set_pool(env.client, pool, PoolConfig(gpus=8), queue)
            holder = await start_run(env.client, queue, gpu_spec(home, "h", seconds=2), "quota-holder", pool)
            await pool_answers(env.client, pool, lambda status: status.in_use == 8)
            await record_run(env.client, out, queue, gpu_spec(home, "w", seconds=0.5), "quota-waiting", pool)
            await holder.result()
            await record(env.client, out, "quota-pool", pool_workflow_id(pool), "")
    await env.shutdown()


async def record_pool_continued(out: Path) -> None:
    """A pool that continued as new (a dev server that suggests it at 40 events), each execution."""
    env = await dev_server("--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=40")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        queue = f"record-{uuid.uuid4().hex[:6]}"
        async with running_workers(env.client, recording_context(home, queue)):
            pool = "record-continued"
            await set_pool(env.client, pool, PoolConfig(gpus=8), queue)
            for index in range(6):
                spec = gpu_spec(home, "can", seconds=0.2)
                await (await start_run(env.client, queue, spec, f"can-{index}", pool)).result()
            division = f"TemporalNamespaceDivision = '{HELPER_DIVISION}'"
            query = f"WorkflowId = '{pool_workflow_id(pool)}' AND {division}"
            runs = [run.run_id async for run in env.client.list_workflows(query)]
            for number, execution in enumerate(reversed(runs), 1):
                await record(env.client, out, f"pool-continued-{number}", pool_workflow_id(pool), execution)
    await env.shutdown()


def one_cached_stage(root: Path) -> str:
    out = f"{root}/{{{{run.id}}}}/out.txt"
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cached}\ninitial: train\n"
        f"states:\n  train:\n    run: {{shell: 'mkdir -p {root}/{{{{run.id}}}} && echo 1 > {out}'}}\n"
        f"    outputs: [{{uri: '{out}'}}]\n    cache: true\n    terminal: true\n"
    )


async def start_run(client: Client, queue: str, spec: str, run_id: str, pool: str = "") -> WorkflowHandle:
    claim = QuotaClaim(pool=pool) if pool else None
    request = RunRequest(spec=spec, poll_seconds=0.2, quota=claim)
    return await client.start_workflow(NpaWorkflowRun.run, request, id=f"history-{run_id}", task_queue=queue)


async def record_run(client: Client, out: Path, queue: str, spec: str, run_id: str, pool: str = "") -> None:
    handle = await start_run(client, queue, spec, run_id, pool)
    await handle.result()
    await record(client, out, run_id, handle.id, "")


async def record(client: Client, out: Path, name: str, workflow_id: str, execution: str) -> None:
    history = await client.get_workflow_handle(workflow_id, run_id=execution or None).fetch_history()
    (out / f"{name}.json").write_text(history.to_json())
    print(f"recorded {name}: {len(history.events)} events")


async def pool_answers(client: Client, pool: str, check: Callable[[PoolStatus], bool]) -> None:
    for _ in range(150):
        if check(await pool_status(client, pool)):
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"pool {pool} never got there")


async def main() -> None:
    out = ROOT / "tests" / "histories"
    out.mkdir(exist_ok=True)
    only = {"mid-group": record_mid_group, "coordinators": record_coordinators, "pool": record_pool_continued}
    if sys.argv[1:2] == ["--only"]:
        await only[sys.argv[2]](out)
        return
    for recorder in only.values():
        await recorder(out)
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

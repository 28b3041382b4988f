"""Runs of any width: a static group of N members, a fan-out of N items, a loop of N waves, on one worker.

For each size: wall time and time per member (or wave), the run's history events
and bytes per member, and the largest single payload in its history (the run's
result, a launch's input, a marker) against Temporal's 256 KiB warning and 2 MiB
limit (npaflow/runtime/payload_limits.py). Members have long names, params and an
output each, 50 at a time; a fan-out's members (`forEach:`) have the same shape,
read from a list a first stage copies (so its figures include that stage and the
list's read). Runs on the local backend with jobs that exit at once.
Run: python bench/width_bench.py [--members 10,100,1000,5000] [--items 1000] [--loop 10,1000,2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev_server import run_to_exit, start_dev_server, start_worker  # noqa: E402  (bench/, the script's directory)
from temporalio.client import Client  # noqa: E402

from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_LIMIT, TEMPORAL_PAYLOAD_WARNING  # noqa: E402
from npaflow.runtime.request import RunRequest  # noqa: E402
from tests.spec_factory import fan_out_group, long_loop, wide_group  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402


async def measure(client: Client, queue: str, spec: str, units: int, what: str, root: Path) -> None:
    run_id = f"wb-{what}-{units}-{uuid.uuid4().hex[:6]}"
    began = time.perf_counter()
    path = root / f"{run_id}.json"  # read by the run, as `submit` does past its inline limit
    path.write_text(spec)
    request = RunRequest(spec="", spec_uri=path.as_uri(), poll_seconds=0.2)
    handle = await client.start_workflow(NpaWorkflowRun.run, request, id=run_id, task_queue=queue)
    try:
        await handle.result()
    except Exception as exc:  # noqa: BLE001 - a refused run is a figure too
        print(f"{what} of {units:>5}: did not finish: {str(exc)[:200]}", flush=True)
        return
    wall = time.perf_counter() - began
    events, size, largest = 0, 0, 0
    executions = {run_id: None}
    async for execution in client.list_workflows(f"WorkflowId = '{run_id}'"):
        executions[execution.run_id] = None
    for execution_id in executions:
        if execution_id == run_id:
            continue
        history = await client.get_workflow_handle(run_id, run_id=execution_id).fetch_history()
        for event in history.events:
            events += 1
            data = event.SerializeToString()
            size += len(data)
            largest = max(largest, len(data))
    print(
        f"{what} of {units:>5}: {wall:7.1f} s ({wall / units * 1000:6.1f} ms each), "
        f"{len(executions) - 1} execution(s), {events / units:5.2f} events and "
        f"{size / units / 1024:6.2f} KiB "
        f"of history per unit, largest event {largest / 1024:7.1f} KiB "
        f"({largest / TEMPORAL_PAYLOAD_WARNING:.2f}x the 256 KiB warning, "
        f"{largest / TEMPORAL_PAYLOAD_LIMIT:.2f}x the 2 MiB limit)",
        flush=True,
    )


async def main(members: list[int], items: list[int], loops: list[int]) -> None:
    env = await start_dev_server()
    home = Path(tempfile.mkdtemp(prefix="npa-width-bench-"))
    root = home / "data"
    root.mkdir()
    queue = f"width-bench-{uuid.uuid4().hex[:6]}"
    worker = start_worker(env.client.service_client.config.target_host, home, queue)
    try:
        for count in members:
            await measure(env.client, queue, wide_group(root, count), count, "members", root)
        for count in items:
            await measure(env.client, queue, wide_group(root, count), count, "members", root)
            await measure(env.client, queue, fan_out_group(root, count), count, "items", root)
        for count in loops:
            await measure(env.client, queue, long_loop(count), count, "waves", root)
    finally:
        worker.terminate()
        worker.wait()
        await env.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", default="10,100,1000,5000", help="group sizes, comma-separated")
    parser.add_argument("--items", default="1000", help="fan-out sizes, each beside a static group of it")
    parser.add_argument("--loop", default="10,1000,2000", help="loop lengths, comma-separated")
    args = parser.parse_args()
    sizes = [int(n) for n in args.members.split(",") if n]
    lengths = [int(n) for n in args.loop.split(",") if n]
    items = [int(n) for n in args.items.split(",") if n]
    run_to_exit(main(sizes, items, lengths))

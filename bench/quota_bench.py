"""GPU quota pools: the cost of acquire and release, and of quotas on many concurrent runs.

On one dev server and one worker process (local backend): --runs runs at once,
each one 1-GPU wave that sleeps --stage-seconds, first without a pool, then
with a pool large enough for all of them (so nothing waits and the difference
is the quota's own cost), then with a pool of --pool-gpus (so runs queue).
Printed: runs/min, wall time, history events per run, and per wave the time
from the launch request to the launch (the acquire) read from each run's
ledger, against the same runs without a pool.
Run: python bench/quota_bench.py [--runs 50] [--stage-seconds 1] [--pool-gpus 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev_server import run_to_exit, start_dev_server, start_worker  # noqa: E402  (bench/, the script's directory)
from temporalio.client import Client  # noqa: E402

from npaflow.quota import PoolConfig, QuotaClaim  # noqa: E402
from npaflow.runtime.request import RunRequest  # noqa: E402
from npaflow.runtime.summary import RunSummary  # noqa: E402
from npaflow.runtime.timestamps import epoch_seconds  # noqa: E402
from npaflow.temporal.pools import set_pool  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

SPEC = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: quota-bench}
resources:
  gpu: {accelerators: 'H100:1'}
initial: train
states:
  train: {run: {shell: 'sleep %s'}, resources: gpu, terminal: true}
"""


async def one_run(
    client: Client, queue: str, spec: str, run_id: str, claim: QuotaClaim | None
) -> tuple[float, int]:
    """(seconds from the run's start to its wave's launch record, history events)."""
    began = time.time()
    request = RunRequest(spec=spec, poll_seconds=0.2, quota=claim)
    handle = await client.start_workflow(NpaWorkflowRun.run, request, id=run_id, task_queue=queue)
    summary: RunSummary = await handle.result()
    launched = summary.waves[0].started_at
    events = len([event async for event in handle.fetch_history_events()])
    return _epoch(launched) - began, events


def _epoch(stamp: str) -> float:
    return epoch_seconds(stamp)


async def batch(
    client: Client, queue: str, runs: int, seconds: float, claim: QuotaClaim | None
) -> dict[str, float]:
    spec = SPEC % seconds
    tag = uuid.uuid4().hex[:6]
    began = time.perf_counter()
    results = await asyncio.gather(
        *(one_run(client, queue, spec, f"qb-{tag}-{i}", claim) for i in range(runs))
    )
    wall = time.perf_counter() - began
    to_launch = [r[0] for r in results]
    return {
        "wall": wall,
        "runs_per_min": runs / wall * 60,
        "events": statistics.mean(r[1] for r in results),
        "to_launch_median": statistics.median(to_launch),
        "to_launch_p90": sorted(to_launch)[int(0.9 * (len(to_launch) - 1))],
    }


async def main(runs: int, seconds: float, pool_gpus: int) -> None:
    env = await start_dev_server()
    home = Path(tempfile.mkdtemp(prefix="npa-quota-bench-"))
    queue = f"quota-bench-{uuid.uuid4().hex[:6]}"
    worker = start_worker(env.client.service_client.config.target_host, home, queue)
    try:
        await set_pool(env.client, "roomy", PoolConfig(gpus=runs), queue)
        await set_pool(env.client, "tight", PoolConfig(gpus=pool_gpus), queue)
        await batch(env.client, queue, 5, seconds, None)  # warm the worker
        plain = await batch(env.client, queue, runs, seconds, None)
        roomy = await batch(env.client, queue, runs, seconds, QuotaClaim(pool="roomy"))
        tight = await batch(env.client, queue, runs, seconds, QuotaClaim(pool="tight"))
    finally:
        worker.terminate()
        worker.wait()
        await env.shutdown()
    print(f"{runs} concurrent runs, one 1-GPU wave of {seconds:g} s each")
    for label, figures in (("no pool", plain), (f"pool of {runs}", roomy), (f"pool of {pool_gpus}", tight)):
        print(
            f"  {label:<12} wall {figures['wall']:6.1f} s  runs/min {figures['runs_per_min']:6.1f}  "
            f"events/run {figures['events']:5.1f}  start->launch median {figures['to_launch_median']:.2f} s "
            f"p90 {figures['to_launch_p90']:.2f} s"
        )
    acquire = roomy["to_launch_median"] - plain["to_launch_median"]
    print(
        f"quota cost with nothing waiting: acquire+release {acquire * 1000:+.0f} ms per wave (median), "
        f"{roomy['events'] - plain['events']:+.1f} history events per run, "
        f"runs/min {roomy['runs_per_min'] / plain['runs_per_min']:.2f}x the runs without a pool"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--stage-seconds", type=float, default=1.0)
    parser.add_argument("--pool-gpus", type=int, default=10)
    options = parser.parse_args()
    run_to_exit(main(options.runs, options.stage_seconds, options.pool_gpus))

"""Submit N gate-loop example runs at once to one worker process on the local backend.

Prints runs/minute, p50/p95 run latency (start to result), the worker's peak RSS
(VmHWM) and history events per wave. Floor (issue 8): >= 20 runs/min on 2 cores
with no run failing.
Run: python bench/load_bench.py [--runs 50] [--poll-seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev_server import run_to_exit, start_dev_server, start_worker  # noqa: E402  (bench/, the script's directory)

from npaflow.runtime.request import RunRequest  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

FLOOR_RUNS_PER_MINUTE = 20


def peak_rss_mib(pid: int) -> float:
    """The process's high-water resident set (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--poll-seconds", type=float, default=30.0, help="the default option")
    args = parser.parse_args()
    env = await start_dev_server()
    spec = (ROOT / "specs" / "examples" / "gate-loop.yaml").read_text()
    with tempfile.TemporaryDirectory() as scratch:
        home, queue = Path(scratch) / "home", f"load-{uuid.uuid4().hex[:6]}"
        worker = start_worker(env.client.service_client.config.target_host, home, queue)
        try:
            latencies, statuses, handles = [], [], []

            async def one(index: int) -> None:
                started = time.perf_counter()
                handle = await env.client.start_workflow(
                    NpaWorkflowRun.run,
                    RunRequest(spec=spec, poll_seconds=args.poll_seconds, vars={"root": f"{scratch}/data"}),
                    id=f"load-{index:03d}",
                    task_queue=queue,
                )
                handles.append(handle)
                try:
                    statuses.append((await handle.result()).status)
                except Exception as exc:  # noqa: BLE001 - counted and printed, not raised
                    statuses.append(f"failed: {exc}")
                latencies.append(time.perf_counter() - started)

            began = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(args.runs)))
            elapsed = time.perf_counter() - began
            rss = peak_rss_mib(worker.pid)
        finally:
            worker.terminate()
            worker.wait()
        events = waves = 0
        for handle in handles:
            history = await handle.fetch_history()
            events += len(history.events)
            waves += len((await handle.result()).waves)
    await env.shutdown()
    per_minute = args.runs / elapsed * 60
    failed = [s for s in statuses if s != "succeeded"]
    print(
        f"runs: {args.runs} gate-loop runs at once, one worker process, local backend, "
        f"poll {args.poll_seconds:g} s, {os.cpu_count()} CPUs"
    )
    print(
        f"wall: {elapsed:.1f} s   runs/min: {per_minute:.1f}   floor {FLOOR_RUNS_PER_MINUTE}/min "
        f"ratio {per_minute / FLOOR_RUNS_PER_MINUTE:.2f}"
    )
    print(
        f"latency: p50 {percentile(latencies, 0.5):.1f} s   p95 {percentile(latencies, 0.95):.1f} s"
        f"   max {max(latencies):.1f} s   mean {statistics.mean(latencies):.1f} s"
    )
    print(f"worker peak RSS: {rss:.0f} MiB")
    print(f"history events per wave: {events / max(waves, 1):.1f} ({events} events, {waves} waves)")
    print(f"failed runs: {len(failed)}" + (f" ({failed[:3]})" if failed else ""))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    run_to_exit(main())

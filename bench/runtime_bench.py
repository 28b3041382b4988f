"""Run a 50-wave serial spec of instant jobs on the local backend; print history and latency figures.

Budgets (issue 4): history events per wave <= 15; median time from a job's end
to the next wave's launch <= 2 s with default options.
Run: python bench/runtime_bench.py [--waves N] [--poll-seconds S]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from dev_server import run_to_exit, start_dev_server  # noqa: E402  (bench/, the script's directory)

from activities.backends.local import LocalBackend  # noqa: E402
from activities.context import ActivityContext  # noqa: E402
from npaflow.runtime.request import BackendName, RunRequest  # noqa: E402
from worker.main import running_workers  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402


def serial_spec(waves: int) -> str:
    states = {f"s{i:03d}": {"run": {"shell": "true"}, "next": f"s{i + 1:03d}"} for i in range(waves)}
    last = f"s{waves - 1:03d}"
    states[last] = {"run": {"shell": "true"}, "terminal": True}
    return yaml.safe_dump(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "bench-serial"},
            "states": states,
        },
        sort_keys=False,
    )


def launch_gaps(jobs_dir: Path) -> list[float]:
    """Seconds from each job's final status write to the next job's creation."""
    jobs = sorted((p for p in jobs_dir.iterdir() if p.is_dir()), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    gaps = []
    for previous, current in itertools.pairwise(jobs):
        ended = max(f.stat().st_mtime for f in (previous / "status").glob("*.json"))
        gaps.append((current / "wave.yaml").stat().st_mtime - ended)
    return gaps


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--waves", type=int, default=50)
    parser.add_argument("--poll-seconds", type=float, default=30.0, help="the default option")
    args = parser.parse_args()
    env = await start_dev_server()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        context = ActivityContext(
            home=home,
            backends={BackendName.LOCAL: LocalBackend(home, "bench")},
            worker_id="bench",
            task_queue="bench",
        )
        async with running_workers(env.client, context):
            started = time.perf_counter()
            handle = await env.client.start_workflow(
                NpaWorkflowRun.run,
                RunRequest(spec=serial_spec(args.waves), poll_seconds=args.poll_seconds),
                id="bench-serial",
                task_queue="bench",
            )
            summary = await handle.result()
            elapsed = time.perf_counter() - started
        history = await handle.fetch_history()
        gaps = launch_gaps(home / "local" / "jobs")
    await env.shutdown()
    events, size = len(history.events), len(history.to_json().encode())
    print(
        f"waves: {summary.wave_count}  status: {summary.status}  wall: {elapsed:.1f}s "
        f"({elapsed / args.waves:.2f}s/wave)"
    )
    print(
        f"history events: {events} total, {events / args.waves:.1f} per wave "
        f"(budget 15, ratio {events / args.waves / 15:.2f})"
    )
    print(f"history bytes: {size} total, {size / args.waves:,.0f} per wave")
    print(
        f"job end -> next launch: median {statistics.median(gaps):.2f}s  p90 "
        f"{sorted(gaps)[int(len(gaps) * 0.9)]:.2f}s  (budget 2.00s, ratio "
        f"{statistics.median(gaps) / 2:.2f})"
    )


if __name__ == "__main__":
    run_to_exit(main())

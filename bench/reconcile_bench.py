"""What the orphan sweep (worker/reconciler.py) costs a worker, and how fast it ends an orphan.

1. Listing: `LocalBackend.live_jobs()` over a home holding N finished jobs and a few
   live ones: the first sweep reads every record, later ones skip jobs seen ended.
2. Asking Temporal: one `describe` per run that has live jobs (`run_standing`).
3. End to end: a one-state run whose job sleeps 60 s is terminated; seconds until its
   job is cancelled by the sweep (NPAFLOW_RECONCILE_SECONDS as given).
Run: python bench/reconcile_bench.py [--finished 1000] [--live 10] [--interval 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.backends.local import LocalBackend  # noqa: E402
from activities.backends.local.jobs import JOB_FILE, LocalJobRecord, LocalTask, write_model  # noqa: E402
from activities.backends.local.task_status import TaskStatus, end_tasks, init_task  # noqa: E402
from activities.context import ActivityContext  # noqa: E402
from bench.dev_server import start_dev_server  # noqa: E402
from npaflow.runtime.request import BackendName, RunRequest  # noqa: E402
from npaflow.temporal.run_standing import run_standing  # noqa: E402
from worker.main import running_workers  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

WORKER = "bench"
SPEC = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: reconcile-bench}
initial: slow
states:
  slow: {terminal: true, run: {shell: sleep 60}}
"""


def fake_job(jobs: Path, number: int, *, ended: bool) -> None:
    """A job record with one task: ended (SUCCEEDED) or still pending (as if just launched)."""
    job_id = f"{WORKER}-{number}"
    job_dir = jobs / job_id
    job_dir.mkdir(parents=True)
    record = LocalJobRecord(
        job_id=job_id, job_name=job_id, worker_id=WORKER, tasks=[LocalTask(name="t")], launched_at=time.time()
    )
    write_model(job_dir / JOB_FILE, record)
    init_task(job_dir, "t")
    if ended:
        end_tasks(job_dir, ["t"], TaskStatus.CANCELLED, "bench")


async def listing(finished: int, live: int) -> tuple[float, float]:
    """Seconds for the first sweep's listing and the median of the next five."""
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        backend = LocalBackend(home, WORKER)
        for number in range(1, finished + live + 1):
            fake_job(backend.jobs_dir, number, ended=number <= finished)
        began = time.perf_counter()
        found = await backend.live_jobs()
        first = time.perf_counter() - began
        assert len(found) == live, (len(found), live)
        later = []
        for _ in range(5):
            began = time.perf_counter()
            await backend.live_jobs()
            later.append(time.perf_counter() - began)
        return first, statistics.median(later)


async def end_to_end(interval: float) -> tuple[float, float]:
    """Median describe round trip, and seconds from a terminate to its job cancelled."""
    env = await start_dev_server()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            home = Path(scratch)
            queue = f"bench-{uuid.uuid4().hex[:6]}"
            backend = LocalBackend(home, WORKER)
            context = ActivityContext(
                home=home, backends={BackendName.LOCAL: backend}, worker_id=WORKER, task_queue=queue
            )
            async with running_workers(env.client, context, reconcile_seconds=interval):
                handle = await env.client.start_workflow(
                    NpaWorkflowRun.run,
                    RunRequest(spec=SPEC, poll_seconds=0.5),
                    id="bench-orphan",
                    task_queue=queue,
                )
                while not await backend.live_jobs():
                    await asyncio.sleep(0.1)
                rounds = []
                for _ in range(20):
                    began = time.perf_counter()
                    await run_standing(env.client, handle.id)
                    rounds.append(time.perf_counter() - began)
                await handle.terminate()
                terminated = time.perf_counter()
                while await backend.live_jobs():
                    await asyncio.sleep(0.1)
                return statistics.median(rounds), time.perf_counter() - terminated
    finally:
        await env.shutdown()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--finished", type=int, default=1000)
    parser.add_argument("--live", type=int, default=10)
    parser.add_argument("--interval", type=float, default=20.0)
    args = parser.parse_args()
    first, later = await listing(args.finished, args.live)
    print(
        f"live_jobs over {args.finished} finished + {args.live} live local jobs: "
        f"first sweep {first * 1000:.1f} ms, later sweeps {later * 1000:.2f} ms (median of 5)"
    )
    describe, ended = await end_to_end(args.interval)
    print(f"one run's standing (describe): {describe * 1000:.1f} ms median of 20")
    print(
        json.dumps(
            {"terminate_to_job_cancelled_seconds": round(ended, 1), "sweep_interval_seconds": args.interval}
        )
    )


if __name__ == "__main__":
    asyncio.run(main())

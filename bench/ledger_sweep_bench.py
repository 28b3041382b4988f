"""What the workers' ledger sweep costs now that it also follows cleaned-up runs (worker/ledger_sweep.py).

Every pass lists this queue's runs closed in its window: those closed without their
code whose phase never ended, and every cancelled or failed run (a cleanup may have
cancelled a job without seeing it end; only runs whose memo counts `unverified_cancels`
are read further). N runs closed as `cancelled` (none unverified) are listed by a
first pass (which settles them) and by later passes within the window's 5-minute overlap.
Run: python bench/ledger_sweep_bench.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from temporalio.common import SearchAttributePair, TypedSearchAttributes  # noqa: E402

from activities.context import ActivityContext  # noqa: E402
from bench.dev_server import run_to_exit, start_dev_server  # noqa: E402
from npaflow.runtime.request import RunRequest  # noqa: E402
from worker.ledger_sweep import LedgerSweep  # noqa: E402
from workflows_def import PHASE_ATTRIBUTE, NpaWorkflowRun  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    env = await start_dev_server()
    queue = f"sweep-bench-{uuid.uuid4().hex[:6]}"  # no worker polls it: the runs only close
    cancelled = TypedSearchAttributes([SearchAttributePair(PHASE_ATTRIBUTE, "cancelled")])
    try:
        for start in range(0, args.runs, 100):
            handles = await asyncio.gather(
                *(
                    env.client.start_workflow(
                        NpaWorkflowRun.run,
                        RunRequest(spec="{}"),
                        id=f"sweep-{n}-{uuid.uuid4().hex[:4]}",
                        task_queue=queue,
                        search_attributes=cancelled,
                    )
                    for n in range(start, min(start + 100, args.runs))
                )
            )
            await asyncio.gather(*(handle.terminate() for handle in handles))
        await asyncio.sleep(3)  # visibility catches up
        sweep = LedgerSweep(env.client, cast(ActivityContext, SimpleNamespace(task_queue=queue)))
        began = time.perf_counter()
        await sweep.sweep()
        first = time.perf_counter() - began
        later = []
        for _ in range(5):
            began = time.perf_counter()
            await sweep.sweep()
            later.append(time.perf_counter() - began)
        print(
            f"ledger sweep over {args.runs} cancelled runs in its window: first pass {first:.2f} s "
            f"({first / args.runs * 1e3:.2f} ms per run), "
            f"later passes median {statistics.median(later):.2f} s; "
            f"settled set {len(sweep.settled)} runs"
        )
    finally:
        await env.shutdown()


if __name__ == "__main__":
    run_to_exit(main())

"""The stage cache's saving and cost: a six-stage spec run twice, and what a miss adds per wave.

On one dev server and one worker process (local backend), each stage a job that
sleeps --stage-seconds and writes its output; every stage asks for one H100, so
the ledger records GPU-hours as it would on a cluster. Printed, each against the
same spec without `cache:`:
  second run   wall time, jobs launched, GPU-hours recorded and saved
  miss cost    per wave: wall time and history events a first (missing) run adds
Run: python bench/cache_bench.py [--stage-seconds 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
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

from npaflow.runtime.request import RunRequest  # noqa: E402
from npaflow.runtime.summary import RunSummary  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

STAGES = ("prep", "tokenize", "train", "evaluate", "report", "publish")


def six_stages(root: Path, seconds: float, *, cached: bool) -> str:
    """Six chained stages; each sleeps, reads the previous output and writes its own."""
    states = []
    for index, name in enumerate(STAGES):
        source = f"{root}/{{{{run.id}}}}/{STAGES[index - 1]}/out.txt" if index else f"{root}/seed.txt"
        target = f"{root}/{{{{run.id}}}}/{name}/out.txt"
        shell = (
            f"mkdir -p {root}/{{{{run.id}}}}/{name} && sleep {seconds} && cat {source} > {target} "
            f"&& echo {name} >> {target} && echo {name} >> {root}/launches.log"
        )
        nxt = f"next: {STAGES[index + 1]}" if index + 1 < len(STAGES) else "terminal: true"
        states.append(
            f"  {name}:\n    run: {{shell: '{shell}'}}\n    resources: gpu\n"
            f"    inputs: [{{uri: '{source}'}}]\n    outputs: [{{uri: '{target}'}}]\n"
            + ("    cache: true\n" if cached else "")
            + f"    {nxt}\n"
        )
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cache-bench}\n"
        "resources:\n  gpu: {accelerators: 'H100:1'}\n"
        f"initial: prep\nstates:\n{''.join(states)}"
    )


async def run_once(client: Client, queue: str, spec: str, run_id: str) -> tuple[float, RunSummary, int]:
    """Wall seconds, the summary, and the run's history events."""
    began = time.perf_counter()
    handle = await client.start_workflow(
        NpaWorkflowRun.run, RunRequest(spec=spec, poll_seconds=0.2), id=run_id, task_queue=queue
    )
    summary: RunSummary = await handle.result()
    wall = time.perf_counter() - began
    events = len([event async for event in handle.fetch_history_events()])
    return wall, summary, events


def launched(root: Path) -> int:
    log = root / "launches.log"
    count = len(log.read_text().split()) if log.exists() else 0
    log.unlink(missing_ok=True)
    return count


async def measure(client: Client, queue: str, root: Path, seconds: float) -> dict[str, float]:
    """One round: plain twice, cached twice (the first cached run misses every stage)."""
    tag = uuid.uuid4().hex[:6]
    (root / "seed.txt").write_text(f"seed {tag}\n")  # new content: the first cached run misses every stage
    figures: dict[str, float] = {}
    for label, cached in (("plain", False), ("cached", True)):
        spec = six_stages(root, seconds, cached=cached)
        for turn in ("first", "second"):
            wall, summary, events = await run_once(client, queue, spec, f"cb-{label}-{turn}-{tag}")
            figures[f"{label}_{turn}_wall"] = wall
            figures[f"{label}_{turn}_events"] = events
            figures[f"{label}_{turn}_jobs"] = launched(root)
            figures[f"{label}_{turn}_gpu_hours"] = summary.usage.gpu_hours
            figures[f"{label}_{turn}_saved"] = summary.cache.gpu_hours_saved
    return figures


def report(rounds: list[dict[str, float]]) -> None:
    def median(name: str) -> float:
        return statistics.median(r[name] for r in rounds)

    waves = len(STAGES)
    print(f"six-stage spec, {len(rounds)} round(s), medians")
    print("second run of the same spec:")
    for label in ("plain", "cached"):
        print(
            f"  {label:<6} wall {median(f'{label}_second_wall'):6.2f} s  "
            f"jobs {median(f'{label}_second_jobs'):.0f}"
            f"  GPU-h recorded {median(f'{label}_second_gpu_hours'):.4f}"
            f"  saved {median(f'{label}_second_saved'):.4f}"
        )
    ratio = median("cached_second_wall") / median("plain_second_wall")
    print(f"  cached/plain wall: {ratio:.2f}x")
    miss_wall = (median("cached_first_wall") - median("plain_first_wall")) / waves
    miss_events = (median("cached_first_events") - median("plain_first_events")) / waves
    print("a miss (first cached run) against the same run without cache:")
    print(f"  {miss_wall * 1000:+.0f} ms wall per wave, {miss_events:+.1f} history events per wave")
    print(
        f"  events per wave: plain {median('plain_first_events') / waves:.1f}, "
        f"cached miss {median('cached_first_events') / waves:.1f}, "
        f"cached hit {median('cached_second_events') / waves:.1f}"
    )


async def main(stage_seconds: float, rounds: int) -> None:
    env = await start_dev_server()
    home = Path(tempfile.mkdtemp(prefix="npa-cache-bench-"))
    root = home / "data"
    root.mkdir()
    (root / "seed.txt").write_text("seed\n")
    queue = f"cache-bench-{uuid.uuid4().hex[:6]}"
    worker = start_worker(env.client.service_client.config.target_host, home, queue)
    try:
        results = [await measure(env.client, queue, root, stage_seconds) for _ in range(rounds)]
        report(results)
    finally:
        worker.terminate()
        worker.wait()
        await env.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stage-seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    run_to_exit(main(options.stage_seconds, options.rounds))

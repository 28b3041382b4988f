"""The run page and report.html: what drawing a big run costs, and what listing many runs costs.

Printed:
- a 1,000-wave run (a single-state loop of 1,000 iterations, one retry in ten):
  report.html render time (CPU) and size; the live page's render from the run's
  status query (what `npaflow ui` does every refresh) and its JSON size;
- 200 runs in the list: on a dev server, 200 runs started (no worker needed to
  list them), then the list page's reads from visibility and render, wall and CPU;
- the same for a 10-wave run, to show the cost grows with the waves.
Run: python bench/page_bench.py [--waves 1000] [--runs 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev_server import run_to_exit, start_dev_server  # noqa: E402  (bench/, the script's directory)

from npaflow.cli.ui.pages import live_payload, runs_page  # noqa: E402
from npaflow.cli.ui.reads import RunReads, Snapshot  # noqa: E402
from npaflow.document.yaml_source import parse_yaml  # noqa: E402
from npaflow.picture.report import ReportLinks, report_html  # noqa: E402
from npaflow.runtime.ledger.attempt import TaskRow, WaveAttemptRecord  # noqa: E402
from npaflow.runtime.ledger.models import RuntimeLedger  # noqa: E402
from npaflow.runtime.request import RunRequest  # noqa: E402
from npaflow.runtime.summary import RunStatusView, WaveView  # noqa: E402
from npaflow.runtime.vocabulary import LedgerStatus, RunPhase, WaveStatus  # noqa: E402
from npaflow.spec.load import parse_spec  # noqa: E402
from npaflow.waves import WaveKey, WaveMember  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

SPEC = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: long-loop}
initial: train
states:
  train:
    run: {shell: "sleep 1"}
    loop: {max: %d}
    next: report
  report: {run: {shell: "true"}, terminal: true}
"""


def stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_790_000_000 + seconds))


def waves(count: int) -> list[WaveAttemptRecord]:
    """`count` loop iterations of one state, every tenth retried once after a failure."""
    records = []
    for i in range(1, count + 1):
        key = WaveKey(sequence=i, members=(WaveMember(state="train", iteration=i),))
        attempts = [WaveStatus.FAILED, WaveStatus.SUCCEEDED] if i % 10 == 0 else [WaveStatus.SUCCEEDED]
        for attempt, status in enumerate(attempts, 1):
            start = i * 60.0 + attempt * 20
            row = TaskRow(job_id=f"j{i}-{attempt}", start_at=stamp(start + 5), end_at=stamp(start + 15))
            records.append(
                WaveAttemptRecord(
                    key=key,
                    states=["train"],
                    attempt=attempt,
                    job_id=f"j{i}-{attempt}",
                    status=status,
                    started_at=stamp(start),
                    ended_at=stamp(start + 15),
                    tasks=[row],
                    error="exit 1" if status is WaveStatus.FAILED else "",
                )
            )
    return records


def timed(fn: Callable[[], object], rounds: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of `rounds` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def draw(count: int, rounds: int) -> None:
    spec, _ = parse_spec(parse_yaml(SPEC % count, "bench"))
    records = waves(count)
    ledger = RuntimeLedger(
        workflow="long-loop", run_id="bench", api_version="v", status=LedgerStatus.SUCCEEDED, waves=records
    )
    wall, cpu, page = timed(lambda: report_html(spec, ledger, now=time.time()), rounds)
    print(
        f"{count:>5} waves ({len(records)} attempts): report.html {wall * 1000:7.1f} ms "
        f"(CPU {cpu * 1000:.1f} ms), {len(str(page)) / 1024:8.1f} KiB"
    )
    view = RunStatusView(
        run_id="bench", workflow="long-loop", phase=RunPhase.RUNNING, waves=[WaveView.of(r) for r in records]
    )
    shot = Snapshot("bench", "x", "RUNNING", "q", spec=spec, view=view)
    links = ReportLinks(logs="/runs/bench/logs?state={state}")
    wall, cpu, payload = timed(lambda: json.dumps(live_payload(shot, links)), rounds)
    print(
        f"{'':>5}        live page refresh {wall * 1000:7.1f} ms (CPU {cpu * 1000:.1f} ms), "
        f"{len(str(payload)) / 1024:8.1f} KiB of JSON"
    )


async def listing(runs: int, rounds: int) -> None:
    env = await start_dev_server()
    try:
        request = RunRequest(spec=SPEC % 3)
        for i in range(runs):
            await env.client.start_workflow(NpaWorkflowRun.run, request, id=f"list-{i}", task_queue="nobody")
        reads = RunReads(env.client)
        await asyncio.sleep(1.5)  # visibility catches up
        walls, cpus, shown = [], [], 0
        for _ in range(rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            rows = await reads.runs("", "", 500)
            runs_page(rows, "", "", 0)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            shown = len(rows)
        print(
            f"{runs} runs listed ({shown} read): list page {statistics.median(walls) * 1000:.1f} ms "
            f"(CPU of the page server {statistics.median(cpus) * 1000:.1f} ms)"
        )
    finally:
        await env.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waves", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    draw(10, args.rounds)
    draw(args.waves, args.rounds)
    run_to_exit(listing(args.runs, args.rounds))


if __name__ == "__main__":
    main()

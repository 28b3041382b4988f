"""npaflow against the raw-Temporal floor (bench/baseline.py), side by side on one dev server.

Both run the same jobs (bash commands that stamp their start and end) through
one worker process each, on the same machine, one system at a time:
  serial   50 instant waves in one run: history events per wave, job end -> next job start
  long     4 waves of `sleep 20` in one run: job end -> next job start
  load     50 and 200 concurrent 3-wave runs, --rounds times alternating: runs/min, CPU per wave,
           and the median ratio
  length   one run of 10 and one of 1,000 instant waves: worker CPU per wave
Every figure is printed with npaflow/baseline (and 1,000 vs 10 waves) ratios.
Run: python bench/compare_bench.py [--only serial,long,load,length] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baseline import BaselinePipeline, PipelineInput  # noqa: E402  (bench/, the script's directory)
from dev_server import start_dev_server, start_worker  # noqa: E402
from temporalio.client import Client  # noqa: E402

from npaflow.runtime.request import RunRequest  # noqa: E402
from workflows_def import NpaWorkflowRun  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def stamped(log: str, body: str, wave: str) -> str:
    """A job that appends `<wave> start|end <epoch>` around `body` to `log`."""
    return f'echo "{wave} start $(date +%s.%N)" >> {log}; {body}; echo "{wave} end $(date +%s.%N)" >> {log}'


def serial_spec(waves: int, log: str, body: str) -> str:
    states = {}
    for index in range(waves):
        name = f"s{index:04d}"
        state: dict[str, object] = {"run": {"shell": stamped(log, body, str(index))}}
        if index == waves - 1:
            state["terminal"] = True
        else:
            state["next"] = f"s{index + 1:04d}"
        states[name] = state
    document = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "compare"},
        "states": states,
    }
    return yaml.safe_dump(document, sort_keys=False)


def gaps(log: Path) -> list[float]:
    """Seconds from each job's end to the next job's start, from the stamps."""
    stamps: dict[tuple[int, str], float] = {}
    for line in log.read_text().splitlines():
        wave, what, when = line.split()
        stamps[(int(wave), what)] = float(when)
    waves = sorted({w for w, _ in stamps})
    return [stamps[(w + 1, "start")] - stamps[(w, "end")] for w in waves[:-1] if (w + 1, "start") in stamps]


def cpu_seconds(pid: int) -> tuple[float, float]:
    """The process's own CPU time, and that of the children it has reaped."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS


def machine_cpu_seconds() -> float:
    """CPU time spent by the whole machine (every process, the dev server included)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / TICKS


@dataclass
class System:
    """One system under test: its worker process and how a run is started and awaited."""

    name: str
    worker: subprocess.Popen[bytes]
    run: Callable[[str, int, str, str], Awaitable[object]]  # run id, waves, log, body


async def npaflow_system(env_address: str, client: Client, home: Path) -> System:
    queue = f"cmp-npa-{uuid.uuid4().hex[:6]}"
    worker = start_worker(env_address, home, queue)

    async def run(run_id: str, waves: int, log: str, body: str) -> object:
        request = RunRequest(spec=serial_spec(waves, log, body))
        handle = await client.start_workflow(NpaWorkflowRun.run, request, id=run_id, task_queue=queue)
        return await handle.result()

    return System("npaflow", worker, run)


async def baseline_system(env_address: str, client: Client) -> System:
    queue = f"cmp-base-{uuid.uuid4().hex[:6]}"
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "baseline.py"), "worker", env_address, queue],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def run(run_id: str, waves: int, log: str, body: str) -> object:
        command = stamped(log, body, "$WAVE")
        return await client.execute_workflow(
            BaselinePipeline.run, PipelineInput(waves, command), id=run_id, task_queue=queue
        )

    return System("baseline", worker, run)


async def history_events(client: Client, run_id: str) -> int:
    return len((await client.get_workflow_handle(run_id).fetch_history()).events)


async def timeouts(client: Client, run_ids: list[str]) -> int:
    """Workflow-task and activity timeouts in these runs' histories (an overloaded worker)."""
    count = 0
    for run_id in run_ids:
        async for event in client.get_workflow_handle(run_id).fetch_history_events():
            kind = event.WhichOneof("attributes") or ""
            count += kind in (
                "workflow_task_timed_out_event_attributes",
                "activity_task_timed_out_event_attributes",
            )
    return count


@dataclass
class Figures:
    """One scenario's measurements for one system."""

    wall: float = 0.0
    cpu: float = 0.0
    children_cpu: float = 0.0
    machine_cpu: float = 0.0
    waves: int = 0
    runs: int = 0
    events: int = 0
    gaps: list[float] | None = None
    timeouts: int = 0

    def worker_ms(self) -> float:
        """The worker process's own CPU per wave (where npaflow's orchestration runs)."""
        return 1000 * self.cpu / max(self.waves, 1)

    def machine_ms(self) -> float:
        """The whole machine's CPU per wave: worker, jobs (npaflow's are forked by its spawner,
        not children of the worker), dev server and this bench."""
        return 1000 * self.machine_cpu / max(self.waves, 1)

    def runs_per_minute(self) -> float:
        return 60 * self.runs / self.wall if self.wall else 0.0


async def measure(
    system: System, client: Client, scratch: Path, *, runs: int, waves: int, body: str = "true"
) -> Figures:
    tag = uuid.uuid4().hex[:6]
    logs = [scratch / f"{system.name}-{tag}-{i}.log" for i in range(runs)]
    ids = [f"{system.name}-{tag}-{i}" for i in range(runs)]
    before, began = cpu_seconds(system.worker.pid), time.perf_counter()
    machine = machine_cpu_seconds()
    await asyncio.gather(*(system.run(ids[i], waves, str(logs[i]), body) for i in range(runs)))
    wall = time.perf_counter() - began
    await asyncio.sleep(1.0)  # the last children get reaped
    after = cpu_seconds(system.worker.pid)
    figures = Figures(
        wall=wall,
        cpu=after[0] - before[0],
        children_cpu=after[1] - before[1],
        machine_cpu=machine_cpu_seconds() - machine,
        waves=runs * waves,
        runs=runs,
    )
    figures.gaps = [g for log in logs for g in gaps(log)]
    if runs == 1:
        figures.events = await history_events(client, ids[0])
    else:
        figures.timeouts = await timeouts(client, ids)
    return figures


def ratio(ours: float, floor: float) -> str:
    return f"{ours / floor:.2f}x" if floor else "n/a"


def median(values: list[float] | None) -> float:
    return statistics.median(values) if values else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="serial,long,load,length")
    parser.add_argument("--quick", action="store_true", help="smaller loads (20 and 50 runs, 300 waves)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating load rounds per size (median)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    env = await start_dev_server()
    address = env.client.service_client.config.target_host
    plain = await Client.connect(address)
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        systems = [
            await npaflow_system(address, env.client, scratch / "home"),
            await baseline_system(address, plain),
        ]
        await asyncio.sleep(5)  # both workers polling
        try:
            await run_scenarios(systems, env.client, scratch, only, quick=args.quick, rounds=args.rounds)
        finally:
            for system in systems:
                system.worker.terminate()
                system.worker.wait()
    await env.shutdown()


async def run_scenarios(
    systems: list[System], client: Client, scratch: Path, only: set[str], *, quick: bool, rounds: int = 1
) -> None:
    npa, base = systems
    if "serial" in only:
        figures = [await measure(s, client, scratch, runs=1, waves=50) for s in systems]
        ours, floor = figures
        print(
            f"serial, 50 instant waves: events/wave npaflow {ours.events / 50:.1f}, baseline "
            f"{floor.events / 50:.1f} ({ratio(ours.events, floor.events)}); job end -> next start "
            f"median npaflow {median(ours.gaps):.3f}s, baseline {median(floor.gaps):.3f}s "
            f"({ratio(median(ours.gaps), median(floor.gaps))})"
        )
    if "long" in only:
        figures = [await measure(s, client, scratch, runs=1, waves=4, body="sleep 20") for s in systems]
        ours, floor = figures
        print(
            f"long, 4 waves of sleep 20: job end -> next start median npaflow {median(ours.gaps):.3f}s, "
            f"baseline {median(floor.gaps):.3f}s ({ratio(median(ours.gaps), median(floor.gaps))})"
        )
    if "load" in only:
        for runs in (20, 50) if quick else (50, 200):
            pairs = []
            for _ in range(rounds):  # alternating, so a slower stretch of the machine hits both
                pairs.append(
                    (
                        await measure(npa, client, scratch, runs=runs, waves=3),
                        await measure(base, client, scratch, runs=runs, waves=3),
                    )
                )
            for ours, floor in pairs:
                print(
                    f"load, {runs} concurrent 3-wave runs: runs/min npaflow {ours.runs_per_minute():.0f}, "
                    f"baseline {floor.runs_per_minute():.0f} "
                    f"({ratio(ours.runs_per_minute(), floor.runs_per_minute())}); machine CPU/wave npaflow "
                    f"{ours.machine_ms():.0f} ms (worker {ours.worker_ms():.0f}), baseline "
                    f"{floor.machine_ms():.0f} ms (worker {floor.worker_ms():.0f}) "
                    f"({ratio(ours.machine_ms(), floor.machine_ms())}); end -> start median npaflow "
                    f"{median(ours.gaps):.2f}s, baseline {median(floor.gaps):.2f}s; task timeouts npaflow "
                    f"{ours.timeouts}, baseline {floor.timeouts}"
                )
            if len(pairs) > 1:
                ratios = [o.runs_per_minute() / f.runs_per_minute() for o, f in pairs if f.runs_per_minute()]
                print(
                    f"load, {runs} concurrent runs, median of {len(pairs)} rounds: runs/min ratio "
                    f"{median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}); machine CPU/wave "
                    f"npaflow {median([o.machine_ms() for o, _ in pairs]):.0f} ms, baseline "
                    f"{median([f.machine_ms() for _, f in pairs]):.0f} ms"
                )
    if "length" in only:
        longest = 300 if quick else 1000
        for system in systems:
            short = await measure(system, client, scratch, runs=1, waves=10)
            long = await measure(system, client, scratch, runs=1, waves=longest)
            print(
                f"length, {system.name}: worker CPU/wave at 10 waves {short.worker_ms():.0f} ms, at "
                f"{longest} waves {long.worker_ms():.0f} ms "
                f"({ratio(long.worker_ms(), short.worker_ms())}, budget 1.5x); wall/wave "
                f"{short.wall / 10:.2f}s vs {long.wall / longest:.2f}s"
            )


if __name__ == "__main__":
    asyncio.run(main())

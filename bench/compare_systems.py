"""The two systems compare_bench.py measures, and how: stamped jobs, CPU from /proc, history checks.

npaflow and the raw-Temporal floor (bench/baseline.py) each run the same stamped
bash jobs through worker processes of their own; `measure` starts the runs and
reads their wall time, CPU per wave, gaps, timeouts, double launches and RSS.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from baseline import BaselinePipeline, PipelineInput  # bench/, the script's directory
from dev_server import start_worker
from server_probe import ServerProbe
from temporalio.client import Client

from npaflow.runtime.request import RunRequest
from workflows_def import NpaWorkflowRun

ROOT = Path(__file__).resolve().parents[1]
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
    """One system under test: its worker processes and how a run is started and awaited."""

    name: str
    workers: list[subprocess.Popen[bytes]]
    run: Callable[[str, int, str, str], Awaitable[object]]  # run id, waves, log, body
    another: Callable[[], subprocess.Popen[bytes]]  # one more worker on the same task queue

    def cpu(self) -> tuple[float, float]:
        """The workers' own CPU seconds, and their reaped children's."""
        times = [cpu_seconds(worker.pid) for worker in self.workers]
        return sum(own for own, _ in times), sum(children for _, children in times)

    def rss_mib(self) -> float:
        """The workers' resident memory together."""
        total = 0
        for worker in self.workers:
            for line in Path(f"/proc/{worker.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        return total / 1024


async def npaflow_system(env_address: str, client: Client, home: Path) -> System:
    queue = f"cmp-npa-{uuid.uuid4().hex[:6]}"
    ledgers = f"file://{home}/runs"  # every worker writes the runs' ledgers in one place

    def another() -> subprocess.Popen[bytes]:
        index = len(system.workers)
        worker_home = home if index == 0 else home.with_name(f"{home.name}-{index}")
        return start_worker(
            env_address, worker_home, queue, NPAFLOW_WORKER_ID=f"bench-{index}", NPAFLOW_LEDGER_ROOT=ledgers
        )

    async def run(run_id: str, waves: int, log: str, body: str) -> object:
        request = RunRequest(spec=serial_spec(waves, log, body))
        handle = await client.start_workflow(NpaWorkflowRun.run, request, id=run_id, task_queue=queue)
        return await handle.result()

    system = System("npaflow", [], run, another)
    system.workers.append(another())
    return system


async def baseline_system(env_address: str, client: Client) -> System:
    queue = f"cmp-base-{uuid.uuid4().hex[:6]}"

    def another() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
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

    return System("baseline", [another()], run, another)


async def history_events(client: Client, run_id: str) -> int:
    return len((await client.get_workflow_handle(run_id).fetch_history()).events)


async def timeouts(client: Client, run_ids: list[str]) -> tuple[int, str]:
    """Workflow-task and activity timeouts in these runs' histories (an overloaded worker), and which."""
    kinds: Counter[str] = Counter()
    for run_id in run_ids:
        scheduled: dict[int, str] = {}
        async for event in client.get_workflow_handle(run_id).fetch_history_events():
            kind = event.WhichOneof("attributes") or ""
            if kind == "activity_task_scheduled_event_attributes":
                scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
            elif kind == "workflow_task_timed_out_event_attributes":
                timeout = event.workflow_task_timed_out_event_attributes.timeout_type
                kinds[f"workflow task {timeout}"] += 1
            elif kind == "activity_task_timed_out_event_attributes":
                attributes = event.activity_task_timed_out_event_attributes
                timeout = attributes.failure.timeout_failure_info.timeout_type
                kinds[f"{scheduled.get(attributes.scheduled_event_id, '?')} {timeout}"] += 1
    breakdown = ", ".join(f"{name} x{count}" for name, count in kinds.most_common())
    return sum(kinds.values()), breakdown


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
    timeout_kinds: str = ""  # which task or activity timed out, and how (the timeout type's number)
    rss_mib: float = 0.0  # the workers' peak resident memory together
    twice: int = 0  # waves whose job started more than once
    server_cpu: float = 0.0  # the dev server's own CPU seconds (when measured with a probe)
    rpcs: int = 0  # RPCs the dev server's frontend answered meanwhile
    rpc_kinds: str = ""  # those RPCs per wave by operation, most first

    def worker_ms(self) -> float:
        """The worker process's own CPU per wave (where npaflow's orchestration runs)."""
        return 1000 * self.cpu / max(self.waves, 1)

    def machine_ms(self) -> float:
        """The whole machine's CPU per wave: worker, jobs (npaflow's are forked by its spawner,
        not children of the worker), dev server and this bench."""
        return 1000 * self.machine_cpu / max(self.waves, 1)

    def server_ms(self) -> float:
        """The dev server's CPU per wave (its share of machine_ms)."""
        return 1000 * self.server_cpu / max(self.waves, 1)

    def rest_ms(self) -> float:
        """Machine CPU per wave outside the workers and the dev server: the jobs (and npaflow's
        supervisors), the spawner, this bench."""
        return self.machine_ms() - self.worker_ms() - self.server_ms()

    def rpcs_per_wave(self) -> float:
        return self.rpcs / max(self.waves, 1)

    def runs_per_minute(self) -> float:
        return 60 * self.runs / self.wall if self.wall else 0.0


async def measure(
    system: System,
    client: Client,
    scratch: Path,
    *,
    runs: int,
    waves: int,
    body: str = "true",
    server: ServerProbe | None = None,
) -> Figures:
    tag = uuid.uuid4().hex[:6]
    logs = [scratch / f"{system.name}-{tag}-{i}.log" for i in range(runs)]
    ids = [f"{system.name}-{tag}-{i}" for i in range(runs)]
    server_before = (cpu_seconds(server.pid)[0], server.rpcs()) if server else None
    before, began = system.cpu(), time.perf_counter()
    machine, peak = machine_cpu_seconds(), [system.rss_mib()]
    sampler = asyncio.ensure_future(sample_rss(system, peak))
    await asyncio.gather(*(system.run(ids[i], waves, str(logs[i]), body) for i in range(runs)))
    wall = time.perf_counter() - began
    sampler.cancel()
    await asyncio.sleep(1.0)  # the last children get reaped
    after = system.cpu()
    figures = Figures(
        wall=wall,
        cpu=after[0] - before[0],
        children_cpu=after[1] - before[1],
        machine_cpu=machine_cpu_seconds() - machine,
        waves=runs * waves,
        runs=runs,
        rss_mib=max(peak),
        twice=sum(launched_twice(log) for log in logs),
    )
    if server is not None and server_before is not None:
        cpu_before, rpcs_before = server_before
        figures.server_cpu = cpu_seconds(server.pid)[0] - cpu_before
        kinds = server.rpcs() - rpcs_before  # Counter subtraction keeps the positive counts
        figures.rpcs = sum(kinds.values())
        wave_count = max(figures.waves, 1)
        figures.rpc_kinds = ", ".join(f"{op} {n / wave_count:.2f}" for op, n in kinds.most_common())
    figures.gaps = [g for log in logs for g in gaps(log)]
    if runs == 1:
        figures.events = await history_events(client, ids[0])
    else:
        figures.timeouts, figures.timeout_kinds = await timeouts(client, ids)
    return figures


async def sample_rss(system: System, peak: list[float]) -> None:
    """Add the workers' resident memory to `peak` every second until cancelled."""
    while True:
        await asyncio.sleep(1.0)
        peak.append(system.rss_mib())


def launched_twice(log: Path) -> int:
    """Waves of one run's stamp log that started more than once (a second launch of one job)."""
    starts = [line.split()[0] for line in log.read_text().splitlines() if line.split()[1:2] == ["start"]]
    return len(starts) - len(set(starts))

"""npaflow against the raw-Temporal floor (bench/baseline.py), side by side on one dev server.

Both run the same jobs (bash commands that stamp their start and end) through
one worker process each, on the same machine, one system at a time:
  serial   50 instant waves in one run: history events per wave, job end -> next job start
  long     4 waves of `sleep 20` in one run: job end -> next job start
  load     50 and 200 concurrent 3-wave runs, --rounds times alternating: runs/min, CPU per wave,
           and the median ratio
  length   one run of 10 and one of 1,000 instant waves: worker CPU per wave
  thousand 1,000 concurrent 3-wave runs on two workers per system (last: it adds the second
           workers): runs/min, CPU per wave, task timeouts, waves launched twice, workers' RSS
Every figure is printed with npaflow/baseline (and 1,000 vs 10 waves) ratios.
Run: python bench/compare_bench.py [--only serial,long,load,length,thousand] [--quick] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_systems import (  # noqa: E402  (bench/, the script's directory)
    Figures,
    System,
    baseline_system,
    measure,
    npaflow_system,
)
from dev_server import run_to_exit, start_dev_server  # noqa: E402
from server_probe import ServerProbe, dev_server_pid, free_port  # noqa: E402
from temporalio.client import Client  # noqa: E402


def ratio(ours: float, floor: float) -> str:
    return f"{ours / floor:.2f}x" if floor else "n/a"


def median(values: list[float] | None) -> float:
    return statistics.median(values) if values else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="serial,long,load,length,thousand")
    parser.add_argument("--quick", action="store_true", help="smaller loads (20 and 50 runs, 300 waves)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating load rounds per size (median)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    metrics_port = free_port()
    env = await start_dev_server(metrics_port)
    probe = ServerProbe(dev_server_pid(), metrics_port)
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
            await run_scenarios(
                systems, env.client, scratch, only, quick=args.quick, rounds=args.rounds, probe=probe
            )
        finally:
            for system in systems:
                for worker in system.workers:
                    worker.terminate()
                    worker.wait()
    await env.shutdown()


async def run_scenarios(
    systems: list[System],
    client: Client,
    scratch: Path,
    only: set[str],
    *,
    quick: bool,
    rounds: int = 1,
    probe: ServerProbe | None = None,
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
                        await measure(npa, client, scratch, runs=runs, waves=3, server=probe),
                        await measure(base, client, scratch, runs=runs, waves=3, server=probe),
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
            if probe is not None:
                split(runs, pairs)
            if len(pairs) > 1:
                ratios = [o.runs_per_minute() / f.runs_per_minute() for o, f in pairs if f.runs_per_minute()]
                print(
                    f"load, {runs} concurrent runs, median of {len(pairs)} rounds: runs/min ratio "
                    f"{median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}); machine CPU/wave "
                    f"npaflow {median([o.machine_ms() for o, _ in pairs]):.0f} ms, baseline "
                    f"{median([f.machine_ms() for _, f in pairs]):.0f} ms"
                )
    if "length" in only:
        await lengths(systems, client, scratch, quick=quick)
    if "thousand" in only:
        await thousand(systems, client, scratch, runs=200 if quick else 1000)


def split(runs: int, pairs: list[tuple[Figures, Figures]]) -> None:
    """Where the CPU per wave goes (medians over the rounds), and the dev server's RPCs per wave."""
    for name, side in (("npaflow", 0), ("baseline", 1)):
        chosen = [pair[side] for pair in pairs]
        print(
            f"load, {runs} runs, {name} CPU/wave by process (median): worker "
            f"{median([f.worker_ms() for f in chosen]):.1f} ms, dev server "
            f"{median([f.server_ms() for f in chosen]):.1f} ms, jobs and the rest "
            f"{median([f.rest_ms() for f in chosen]):.1f} ms; dev-server RPCs/wave "
            f"{median([f.rpcs_per_wave() for f in chosen]):.2f} ({chosen[-1].rpc_kinds})"
        )


async def thousand(systems: list[System], client: Client, scratch: Path, *, runs: int) -> None:
    """`runs` concurrent 3-wave runs on two workers per system: throughput, timeouts, double launches, RSS."""
    for system in systems:
        system.workers.append(system.another())
    await asyncio.sleep(5)  # the second workers polling
    ours, floor = [await measure(system, client, scratch, runs=runs, waves=3) for system in systems]
    per_100 = 100 / runs
    print(
        f"thousand, {runs} concurrent 3-wave runs, two workers each: runs/min npaflow "
        f"{ours.runs_per_minute():.0f}, baseline {floor.runs_per_minute():.0f} "
        f"({ratio(ours.runs_per_minute(), floor.runs_per_minute())}); machine CPU/wave npaflow "
        f"{ours.machine_ms():.0f} ms, baseline {floor.machine_ms():.0f} ms "
        f"({ratio(ours.machine_ms(), floor.machine_ms())}); task timeouts npaflow {ours.timeouts} "
        f"({ours.timeout_kinds or 'none'}), baseline {floor.timeouts}; waves launched twice npaflow "
        f"{ours.twice}, baseline {floor.twice}; workers' peak "
        f"RSS npaflow {ours.rss_mib:.0f} MiB ({ours.rss_mib * per_100:.1f} MiB per 100 open runs), baseline "
        f"{floor.rss_mib:.0f} MiB ({floor.rss_mib * per_100:.1f})"
    )


async def lengths(systems: list[System], client: Client, scratch: Path, *, quick: bool) -> None:
    """One run of 10 and one of 1,000 instant waves: worker CPU per wave stays flat."""
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
    run_to_exit(main())

"""How fast a local job's supervisor starts: forked by the home's spawner, and as a fresh interpreter.

Start = from `SupervisorStarter.start` to the supervisor's `supervisor.json`
(its first act: from then on the job is running). The job itself has no task,
so only the start is measured. Budget (issue 15): 50 ms.
Run: python bench/supervisor_bench.py [--jobs 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.backends.local.spawn import SUPERVISOR_COMMAND, SupervisorStarter  # noqa: E402
from activities.backends.local.task_status import JOB_FILE, SUPERVISOR_FILE, WAVE_FILE  # noqa: E402

BUDGET_SECONDS = 0.050


def empty_job(jobs: Path, number: int) -> Path:
    """A job directory whose wave has no task: its supervisor records itself and exits."""
    job_dir = jobs / f"bench-{number}"
    job_dir.mkdir(parents=True)
    (job_dir / JOB_FILE).write_text(json.dumps({"job_id": job_dir.name, "job_name": job_dir.name}))
    (job_dir / WAVE_FILE).write_text(json.dumps({"tasks": []}))
    return job_dir


def start_seconds(starter: SupervisorStarter, job_dir: Path) -> float:
    began = time.perf_counter()
    starter.start(job_dir, {"PATH": "/usr/bin:/bin"})
    while not (job_dir / SUPERVISOR_FILE).exists():
        time.sleep(0.0005)
    return time.perf_counter() - began


def measure(home: Path, jobs: int, *, spawner: bool) -> list[float]:
    starter = SupervisorStarter(home, SUPERVISOR_COMMAND)
    starter.use_spawner = spawner  # off: the fallback, a fresh interpreter per job
    start_seconds(starter, empty_job(home / "warm", 0))  # the spawner comes up once per home
    return [start_seconds(starter, empty_job(home / "jobs", n)) for n in range(jobs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for spawner in (True, False):
            home = Path(scratch) / ("spawner" if spawner else "interpreter")
            seconds = measure(home, args.jobs, spawner=spawner)
            median = statistics.median(seconds)
            p95 = sorted(seconds)[int(0.95 * (len(seconds) - 1))]
            print(
                f"supervisor start, {'forked by the spawner' if spawner else 'fresh interpreter'}: "
                f"median {1000 * median:.1f} ms, p95 {1000 * p95:.1f} ms over {len(seconds)} jobs "
                f"(budget {1000 * BUDGET_SECONDS:.0f} ms, ratio {median / BUDGET_SECONDS:.2f})"
            )


if __name__ == "__main__":
    main()

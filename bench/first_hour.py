"""A new user's first hour, as one recorded flow (issue 33's acceptance), timed.

1. A fresh clone of HEAD and the README's first command, as written.
2. A dev server with no worker, then twenty mistakes from a table (typos in the
   spec and in `--var`, bad schedules and numbers, an unknown namespace, a dead
   server, runs that do not exist, a page server exposed without a token), each
   answered in one or two lines with the documented exit code and no traceback.
3. Five runs cancelled before any worker polls (`npaflow cancel`, `temporal
   workflow cancel`, both); a worker started afterwards launches no job, and
   every run's ledger says cancelled with no waves.
Prints one row per step and a verdict; exit 1 when any step did not hold.
Run: python bench/first_hour.py [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATE = "specs/examples/gate-loop.yaml"
NS = ["--namespace", "prod"]


@dataclass(frozen=True)
class Mistake:
    """One row: what the user typed and the exit code the docs promise."""

    label: str
    argv: list[str]
    code: int = 2
    dead_server: bool = False


def mistakes(scratch: Path) -> list[Mistake]:
    spec = (ROOT / GATE).read_text()
    typos = {
        "intial.yaml": spec.replace("\ninitial:", "\nintial:"),
        "metdata.yaml": spec.replace("\nmetadata:", "\nmetdata:"),
        "state-key.yaml": spec.replace("    outputs:\n", "    output:\n", 1),
    }
    for name, text in typos.items():
        assert text != spec, name
        (scratch / name).write_text(text)
    return [
        Mistake(
            "spec: top-level 'intial' (warning, did-you-mean)", ["validate-spec", f"{scratch}/intial.yaml"], 0
        ),
        Mistake("spec: top-level 'metdata' (warning)", ["validate-spec", f"{scratch}/metdata.yaml"], 0),
        Mistake("spec: a state's 'output'", ["validate-spec", f"{scratch}/state-key.yaml"]),
        Mistake("submit: a state's 'output'", ["submit", f"{scratch}/state-key.yaml"]),
        Mistake("submit: --var treshold=80", ["submit", GATE, "--var", "treshold=80"]),
        Mistake("submit: --var without a value", ["submit", GATE, "--var", "promote_threshold"]),
        Mistake("submit: no such spec file", ["submit", "specs/examples/gate-lop.yaml"]),
        Mistake("submit: --max-gpu-hours -1", ["submit", GATE, "--max-gpu-hours", "-1"]),
        Mistake("schedule: cron hour 25", ["schedule", "create", "s1", GATE, "--cron", "0 25 * * *"]),
        Mistake("schedule: cron 'daily'", ["schedule", "create", "s2", GATE, "--cron", "daily"]),
        Mistake("schedule: interval '5x'", ["schedule", "create", "s3", GATE, "--every", "5x"]),
        Mistake("list: unknown namespace", ["list", *NS]),
        Mistake("submit: unknown namespace", ["submit", GATE, *NS]),
        Mistake("status: unknown namespace", ["status", "nw-0", *NS]),
        Mistake("list: dead server", ["list"], dead_server=True),
        Mistake("submit: dead server", ["submit", GATE], dead_server=True),
        Mistake("status: no such run", ["status", "no-such-run"]),
        Mistake("logs: no worker serves the run", ["logs", "nw-0"]),
        Mistake("report: no such run", ["report", "no-such-run"]),
        Mistake("ui: beyond loopback without a token", ["ui", "--host", "0.0.0.0"]),
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def readme_first_command(clone: Path) -> str:
    block = re.search(r"```bash\n(.*?)```", (clone / "README.md").read_text(), re.S)
    assert block, "README has no bash block"
    return block.group(1).splitlines()[0]


def row(label: str, ok: bool, seconds: float, said: str) -> bool:
    print(f"{'ok ' if ok else 'BAD'} {label:<50} {seconds:6.2f} s  {said[:150]}", flush=True)
    return ok


class Flow:
    """The clone, its venv and the servers the flow starts (stopped by pid)."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.clone = scratch / "npaflow"
        self.home = scratch / "home"
        self.port = free_port()
        self.processes: list[subprocess.Popen[bytes]] = []

    def environ(self, address: str | None = None) -> dict[str, str]:
        environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        bin_dir = self.clone / ".venv" / "bin"
        home = self.home if address != "" else self.scratch / "readme-home"  # the README run's own jobs
        environ.update(PATH=f"{bin_dir}{os.pathsep}{environ['PATH']}", NPAFLOW_HOME=str(home))
        environ.pop("TEMPORAL_ADDRESS", None)
        if address != "":  # "": as a new user's shell, which names no server
            environ["TEMPORAL_ADDRESS"] = address or f"127.0.0.1:{self.port}"
        return environ

    def npaflow(self, argv: list[str], address: str | None = None) -> tuple[int, str, str, float]:
        start = time.perf_counter()
        done = subprocess.run(
            ["npaflow", *argv], cwd=self.clone, env=self.environ(address), capture_output=True, text=True
        )
        return done.returncode, done.stdout, done.stderr, time.perf_counter() - start

    def readme(self) -> bool:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(self.clone)], check=True)
        command = readme_first_command(self.clone)
        start = time.perf_counter()
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.clone, env=self.environ(""), capture_output=True, text=True
        )
        tail = done.stdout.strip().splitlines()[-1:] or [done.stderr[-200:]]
        return row(
            "README command 1 (fresh venv, dev, gate-loop)",
            done.returncode == 0 and "succeeded" in done.stdout,
            time.perf_counter() - start,
            tail[0],
        )

    def start(self, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        with open(self.scratch / log, "wb") as out:
            process = subprocess.Popen(
                argv,
                cwd=self.clone,
                env=self.environ(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes.append(process)
        return process

    def server(self) -> None:
        ui = free_port()
        self.start(
            [
                "temporal",
                "server",
                "start-dev",
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--ui-port",
                str(ui),
                "--headless",
                "--log-level",
                "error",
            ],
            "server.log",
        )
        deadline = time.monotonic() + 60
        while self.npaflow(["list"])[0] != 0:
            assert time.monotonic() < deadline, "the dev server did not come up in 60 s"
            time.sleep(0.5)

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)


def one_answer(flow: Flow, mistake: Mistake) -> bool:
    address = f"127.0.0.1:{free_port()}" if mistake.dead_server else None
    code, out, err, seconds = flow.npaflow(mistake.argv, address)
    lines = [line for line in err.splitlines() if line.strip()]
    ok = code == mistake.code and "Traceback" not in out + err and 1 <= len(lines) <= 2
    return row(f"{mistake.label} -> exit {code}", ok, seconds, " | ".join(lines))


RUNS = [f"nw-{index}" for index in range(5)]


def submitted_without_a_worker(flow: Flow) -> bool:
    ok = True
    for run in RUNS:
        code, out, err, seconds = flow.npaflow(["submit", GATE, "--run-id", run])
        ok &= row(f"submit {run} with no worker -> exit {code}", code == 0, seconds, (out + err).strip())
    return ok


def cancelled_before_a_worker(flow: Flow) -> bool:
    """Five runs cancelled three ways with no worker; then a worker: nothing launches, all recorded."""
    ok = True
    for run in RUNS[:2] + RUNS[4:]:
        code, out, err, seconds = flow.npaflow(["cancel", run])
        ok &= row(f"cancel {run} before a worker -> exit {code}", code == 0, seconds, (out + err).strip())
    for run in RUNS[2:]:
        argv = ["temporal", "workflow", "cancel", "--workflow-id", run, "--address", f"127.0.0.1:{flow.port}"]
        done = subprocess.run(argv, env=flow.environ(), capture_output=True, text=True)
        ok &= row(f"temporal workflow cancel {run}", done.returncode == 0, 0.0, done.stdout.strip())
    flow.start(["npaflow", "worker", "--backend", "local"], "worker.log")
    start = time.perf_counter()
    for run in RUNS:
        recorded = ledger_says_cancelled(flow, run)
        ok &= row(
            f"{run} once a worker started",
            recorded,
            time.perf_counter() - start,
            "ledger: cancelled, no waves",
        )
    jobs_dir = flow.home / "local" / "jobs"
    jobs = list(jobs_dir.iterdir()) if jobs_dir.exists() else []
    return row("jobs launched for the five runs", not jobs, 0.0, f"{len(jobs)} job directories") and ok


def ledger_says_cancelled(flow: Flow, run: str) -> bool:
    ledger = flow.home / "runs" / run / "npa-workflow" / "runtime.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if ledger.exists():
            document = json.loads(ledger.read_text())
            if document.get("status") not in (None, "running"):
                return bool(document.get("status") == "cancelled" and not document.get("waves"))
        time.sleep(0.5)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="npa-first-hour-"))
    flow = Flow(scratch)
    try:
        ok = flow.readme()
        flow.server()
        ok &= submitted_without_a_worker(flow)
        table = mistakes(scratch)
        for mistake in table:
            ok &= one_answer(flow, mistake)
        ok &= cancelled_before_a_worker(flow)
        listed = json.loads(flow.npaflow(["list", "--json"])[1] or "[]")
        started = sorted(run["run_id"] for run in listed)
        ok &= row("runs on the server after the mistakes", started == RUNS, 0.0, ", ".join(started))
    finally:
        flow.stop()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(table)} mistakes; verdict: {'every step held' if ok else 'SOME STEP FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

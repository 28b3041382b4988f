"""A real SkyPilot API server (0.12.2 to 0.14) for tests and benches, on a free port, in a HOME of its own.

Consolidation mode runs the jobs controller inside the server, so launch,
queue, cancel and logs are real with no cloud (launches end FAILED_PRECHECKS).
The server runs from a Python of choice (its own venv: `server_pythons()`),
while the worker's SDK is always this venv's; needs rsync.

The server is started the way `sky api start` starts it (`python -m
sky.server.server`), but on a port picked free, so two checkouts' suites run
side by side; it is stopped by its own process groups and by the processes that
carry its HOME or run in it (controllers SkyPilot spawns later), never with
`sky api stop`, which stops every local API server on the host.
"""

from __future__ import annotations

import fcntl
import http.client
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.helpers import free_port

CONFIG = "jobs:\n  controller:\n    consolidation_mode: true\n"
#: The port SkyPilot's consolidated jobs controller launches through (sky/server/common.py).
SKYPILOT_PORT = 46580
#: Seconds without any process of ours before a stop counts as complete.
QUIET_SECONDS = 3.0
BRIDGE = Path(__file__).resolve().parent / "socket_bridge.py"
#: One live server per host at a time: without network namespaces they would share the fixed
#: port, and even in namespaces of their own two cloud-less servers saturate a small host (each
#: spawns a Python process per request) and keep each other's jobs PENDING for minutes.
TURN_LOCK = Path(tempfile.gettempdir()) / "npaflow-skypilot-live-server.lock"


@contextmanager
def host_turn(lock_path: Path = TURN_LOCK) -> Iterator[None]:
    """Wait until no other suite or bench on this host runs a live server, and hold the turn.

    Taken around a server's whole life, restarts included (a test that stops and
    restarts the server must not lose its turn halfway). flock: a crashed holder frees it.
    """
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another suite's SkyPilot API server to stop ({lock_path})", file=sys.stderr)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def can_isolate_network() -> bool:
    """True when this user may run a process in a network namespace of its own (unshare -rn)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True, check=False
    )
    return probe.returncode == 0


class SkyApiServer:
    """Starts and stops one API server whose state lives under `home`.

    SkyPilot's consolidated controller talks to its own server on port 46580, so
    the server runs in a network namespace of its own (its own loopback and
    46580) and is reached from the host through a bridge on a free port. Where
    namespaces are not allowed it runs on the host's 46580. Either way its user
    holds `host_turn()` around the server's life.
    """

    def __init__(self, home: Path, python: Path | None = None, release: str = "") -> None:
        self.home = home.resolve()
        self.python = python or Path(sys.executable)
        self.release = release  # the SkyPilot release `python` runs, where the caller knows it
        self.isolated = can_isolate_network()
        self.port = free_port() if self.isolated else SKYPILOT_PORT
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.socket = Path(tempfile.mkdtemp(prefix="npa-sky-")) / "api.sock"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.log_offset = 0

    def environ(self) -> dict[str, str]:
        """Its own HOME; the server's venv first on PATH (the controllers it spawns run `python -m sky`)."""
        path = f"{self.python.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        environ = {
            **os.environ,
            "HOME": str(self.home),
            "PATH": path,
            "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
            "IS_SKYPILOT_SERVER": "true",
        }
        environ.pop("SKYPILOT_API_SERVER_ENDPOINT", None)  # the controller uses the server's default
        return environ

    def healthy(self) -> bool:
        """True once the server answers its health check (a garbled answer while it starts is "not yet")."""
        try:
            with urllib.request.urlopen(f"{self.endpoint}/api/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError, http.client.HTTPException):
            return False

    def start(self) -> None:
        if shutil.which("rsync") is None:
            raise RuntimeError("the SkyPilot API server needs rsync (apt-get install rsync)")
        (self.home / ".sky" / "api_server").mkdir(parents=True, exist_ok=True)
        (self.home / ".sky" / "config.yaml").write_text(CONFIG)
        self.processes = []
        self.socket.unlink(missing_ok=True)
        self.jobs_daemon_log().unlink(missing_ok=True)  # a restart must not read the last server's line
        self.log_offset = self.log_path().stat().st_size if self.log_path().exists() else 0
        server = f"exec {shlex.quote(str(self.python))} -m sky.server.server --host 127.0.0.1"
        if self.isolated:
            bridge = (
                f"{shlex.quote(sys.executable)} {shlex.quote(str(BRIDGE))} unix-to-tcp "
                f"{shlex.quote(str(self.socket))} 127.0.0.1 {SKYPILOT_PORT} &"
            )
            command = ["unshare", "-rn", "sh", "-c", f"ip link set lo up && {bridge} {server}"]
        else:
            command = ["sh", "-c", server]
        # cwd: SkyPilot 0.12.2's consolidated jobs controller creates '~/sky_logs/managed_jobs'
        # without expanding '~', i.e. under the server's working directory.
        self._spawn(command, self.log_path())
        if self.isolated:
            self._spawn_bridge()
        deadline = time.monotonic() + 180
        while not (self.healthy() and self.runs_managed_jobs()):
            if self.processes[0].poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"SkyPilot API server did not come up with its jobs controller; see {self.log_path()} "
                    f"and {self.jobs_daemon_log()}"
                )
            time.sleep(0.5)

    @contextmanager
    def outage(self) -> Iterator[None]:
        """The server unreachable from the host while inside, then reachable again.

        In a namespace of its own only the host's bridge stops: to a worker that is the
        same refused connection as a stopped server, and the server keeps its jobs
        controller, so no restart (a minute or more on a loaded host) follows. Elsewhere
        the server itself stops and starts again.
        """
        if not self.isolated:
            self.stop()
            try:
                yield
            finally:
                self.start()
            return
        bridge = self.processes.pop()
        with_signal(bridge.pid, signal.SIGKILL, group=True)
        bridge.wait(timeout=10)
        try:
            yield
        finally:
            self._spawn_bridge()
            deadline = time.monotonic() + 30
            while not self.healthy():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the bridge to {self.home}'s server did not come back in 30 s")
                time.sleep(0.2)

    def runs_managed_jobs(self) -> bool:
        """True once the server holds the consolidated controller's lock and has recovered.

        Until then the server answers health checks but starts no jobs controller, and
        every job it accepts stays PENDING (a leftover of an earlier server holding the
        lock kept it so for good). 0.12 logs the lock in its refresh daemon's log; 0.14
        takes it in a thread of the server (server.log) and then waits 15 s before its
        recovery, gating controller starts on a signal file until recovery is done.
        """
        if "Lock acquired!" in _read(self.jobs_daemon_log()):
            return True
        this_server = _read(self.log_path())[self.log_offset :]
        return "Consolidation mode lock acquired" in this_server and not self.recovering()

    def recovering(self) -> bool:
        return (self.home / ".sky" / ".controller_recovery_restarting_signal").exists()

    def jobs_daemon_log(self) -> Path:
        return self.home / ".sky" / "api_server" / "request_logs" / "managed-job-status-refresh-daemon.log"

    def _spawn_bridge(self) -> None:
        """The host's end of the bridge: our free port to the namespace's socket."""
        self._spawn(
            [sys.executable, str(BRIDGE), "tcp-to-unix", "127.0.0.1", str(self.port), str(self.socket)],
            self.home / "bridge.log",
        )

    def _spawn(self, command: list[str], log_path: Path) -> None:
        with open(log_path, "ab") as log:
            self.processes.append(
                subprocess.Popen(
                    command,
                    env=self.environ(),
                    cwd=self.home,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )

    def stop(self) -> None:
        """Stop our process groups, then sweep what is ours until none is left.

        Each group gets SIGKILL after SIGTERM even when its leader exited in time: the
        server's request executors stay in its group, and one that outlives the server
        keeps the consolidated controller's lock, so a restarted server never starts a
        jobs controller and every later job stays PENDING.
        """
        for process in self.processes:
            with_signal(process.pid, signal.SIGTERM, group=True)
        for process in self.processes:
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=20)
            with_signal(process.pid, signal.SIGKILL, group=True)
            process.wait(timeout=10)
        quiet_since, deadline = time.monotonic(), time.monotonic() + 60
        while time.monotonic() - quiet_since < QUIET_SECONDS:
            if time.monotonic() > deadline:
                raise RuntimeError(f"processes of the API server in {self.home} still start after 60 s")
            if self.kill_leftovers():
                quiet_since = time.monotonic()
            time.sleep(0.2)

    def kill_leftovers(self) -> int:
        """SIGKILL every process of ours that left our groups (controllers, executors); how many.

        Ours: our HOME in its environment, or our HOME as its working directory. The
        executors rename themselves (setproctitle), which overwrites the environment
        that /proc shows, so the directory they inherited is what still marks them.
        """
        return kill_carrying_home(self.home)

    def log_path(self) -> Path:
        return self.home / ".sky" / "api_server" / "server.log"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def with_signal(pid: int, sig: signal.Signals, *, group: bool = False) -> None:
    """Signal a process (or its group), ignoring one that is already gone."""
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def carries_home(pid: int, home: Path) -> bool:
    """True when the process has `home` as its HOME or runs in `home` (or below it)."""
    proc = Path("/proc") / str(pid)
    if f"HOME={home}".encode() in (proc / "environ").read_bytes().split(b"\0"):
        return True
    cwd = Path(os.readlink(proc / "cwd").removesuffix(" (deleted)"))
    return cwd == home or home in cwd.parents


def kill_carrying_home(home: Path) -> int:
    """SIGKILL every other process that carries `home`; return how many were found."""
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if carries_home(int(entry.name), home):
                os.kill(int(entry.name), signal.SIGKILL)
                found += 1
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found

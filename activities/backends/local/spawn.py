"""Start a local job's supervisor: forked by this home's spawner, else a fresh interpreter.

The spawner (spawner.py) is started on first use, detached, and found
again through its socket by later launches and restarted workers. Any problem
reaching it falls back to starting the supervisor directly: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog

from activities.backends.local import spawner, supervisor

log = structlog.get_logger(__name__)

#: Standard library only (-S: no site-packages, -E: no PYTHON* variables).
SUPERVISOR_COMMAND = (sys.executable, "-S", "-E", supervisor.__file__)
SPAWNER_COMMAND = (sys.executable, "-S", "-E", spawner.__file__)
#: How long a launch waits for a spawner it just started to accept.
SPAWNER_START_SECONDS = 5.0


class SupervisorStarter:
    """Starts supervisors for one home's jobs; `command` overrides the spawner (tests)."""

    def __init__(self, home_dir: Path, command: Sequence[str] = SUPERVISOR_COMMAND) -> None:
        self.socket = home_dir / "spawner.sock"
        self.command = tuple(command)
        self.use_spawner = self.command == SUPERVISOR_COMMAND

    def start(self, job_dir: Path, env: Mapping[str, str]) -> int:
        """The supervisor's pid (its own session, detached from this process)."""
        if self.use_spawner:
            try:
                return self._fork(job_dir, env)
            except (OSError, ValueError, KeyError) as exc:
                log.warning("local.spawner_unavailable", error=str(exc), fallback="interpreter")
        with open(job_dir / "supervisor.log", "ab") as out:
            process = subprocess.Popen(
                [*self.command, str(job_dir)],
                cwd=job_dir,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return process.pid

    def _fork(self, job_dir: Path, env: Mapping[str, str]) -> int:
        try:
            return self._ask(job_dir, env)
        except (ConnectionRefusedError, FileNotFoundError):
            self._start_spawner()
            return self._ask(job_dir, env)

    def _ask(self, job_dir: Path, env: Mapping[str, str]) -> int:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(10)
            connection.connect(str(self.socket))
            request = json.dumps({"job_dir": str(job_dir), "env": dict(env)}).encode() + b"\n"
            connection.sendall(request)
            with connection.makefile("rb") as stream:
                answer = json.loads(stream.readline() or b"{}")
        if "pid" not in answer:
            raise ValueError(f"spawner refused: {answer.get('error', 'no answer')}")
        return int(answer["pid"])

    def _start_spawner(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()  # a dead spawner's socket
        self.socket.parent.mkdir(parents=True, exist_ok=True)
        with open(self.socket.parent / "spawner.log", "ab") as out:
            subprocess.Popen(
                [*SPAWNER_COMMAND, str(self.socket)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={"PATH": "/usr/bin:/bin"},
            )
        deadline = time.monotonic() + SPAWNER_START_SECONDS
        while not self.socket.exists():
            if time.monotonic() > deadline:
                raise OSError(f"the spawner did not come up at {self.socket}")
            time.sleep(0.01)

"""A real SkyPilot 0.12.2 API server for tests: `sky api start` with a HOME of its own.

Consolidation mode runs the jobs controller inside the server, so launch,
queue, cancel and logs are real with no cloud (launches end FAILED_PRECHECKS).
Needs skypilot==0.12.2 with fastapi 0.128.0 (the `skypilot` extra) and rsync.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

#: `sky api start` always serves the local default endpoint.
ENDPOINT = "http://127.0.0.1:46580"
CONFIG = "jobs:\n  controller:\n    consolidation_mode: true\n"


class SkyApiServer:
    """Starts and stops one API server whose state lives under `home`."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.endpoint = ENDPOINT
        self.sky = str(Path(sys.executable).parent / "sky")

    def environ(self) -> dict[str, str]:
        # The controllers SkyPilot spawns run `python -m sky...` from PATH: this venv's first.
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        return {
            **os.environ,
            "HOME": str(self.home),
            "PATH": path,
            "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
            "SKYPILOT_API_SERVER_ENDPOINT": self.endpoint,
        }

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/api/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def start(self) -> None:
        if shutil.which("rsync") is None:
            raise RuntimeError("the SkyPilot API server needs rsync (apt-get install rsync)")
        if self.healthy():
            raise RuntimeError(
                f"another SkyPilot API server already answers at {self.endpoint}; "
                "stop it (sky api stop) before running these tests"
            )
        (self.home / ".sky").mkdir(parents=True, exist_ok=True)
        (self.home / ".sky" / "config.yaml").write_text(CONFIG)
        # cwd: SkyPilot 0.12.2's consolidated jobs controller creates '~/sky_logs/managed_jobs'
        # without expanding '~', i.e. under the server's working directory.
        subprocess.run(
            [self.sky, "api", "start"],
            env=self.environ(),
            cwd=self.home,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=180,
        )
        deadline = time.monotonic() + 120
        while not self.healthy():
            if time.monotonic() > deadline:
                raise RuntimeError(f"SkyPilot API server did not come up; see {self.log_path()}")
            time.sleep(0.5)

    def stop(self) -> None:
        subprocess.run(
            [self.sky, "api", "stop"],
            env=self.environ(),
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        """Processes the server left that still run with our HOME (controllers, executors)."""
        marker = f"HOME={self.home}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    os.kill(int(entry.name), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue

    def log_path(self) -> Path:
        return self.home / ".sky" / "api_server" / "server.log"

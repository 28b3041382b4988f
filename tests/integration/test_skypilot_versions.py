"""The worker says which SkyPilot it speaks and which one the server runs; SkyPilot's hints go to its log.

The API server here answers only its health check, the way a real one of another
release would (its JSON body and version headers); SkyPilot's own client code reads it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("sky", reason="install the 'skypilot' extra")

from activities.backends.skypilot_versions import ServerState
from tests.helpers import ROOT, free_port
from worker.skypilot_check import skypilot_health

pytestmark = [pytest.mark.integration, pytest.mark.skypilot]


def health_server(version: str, api_version: int) -> Iterator[str]:
    """A server whose /api/health answers as a SkyPilot `version` server would."""

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(
                {
                    "status": "healthy",
                    "api_version": str(api_version),
                    "version": version,
                    "version_on_disk": version,
                    "commit": "0" * 40,
                    "basic_auth_enabled": False,
                    "user": None,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-SkyPilot-API-Version", str(api_version))
            self.send_header("X-SkyPilot-Version", version)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.fixture
def too_old_server() -> Iterator[str]:
    yield from health_server("0.9.3", 10)


@pytest.fixture
def newer_server() -> Iterator[str]:
    yield from health_server("0.16.0", 90)


def run_worker_process(endpoint: str, home: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "NPAFLOW_HOME": str(home),
        "SKYPILOT_API_SERVER_ENDPOINT": endpoint,
        "NPAFLOW_BACKEND": "skypilot",
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    return subprocess.run(
        [str(Path(sys.executable).parent / "npaflow"), "worker"],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_server_that_refuses_the_sdk_fails_the_health_check_naming_both_versions(
    too_old_server: str,
) -> None:
    problem = skypilot_health(too_old_server)
    assert problem is not None
    assert "0.9.3" in problem and "refuses this worker's client" in problem
    assert "pip install" in problem and "docs/deploy.md" in problem


def test_a_worker_refuses_to_start_against_a_server_that_refuses_its_sdk(
    too_old_server: str, tmp_path: Path
) -> None:
    result = run_worker_process(too_old_server, tmp_path)
    assert result.returncode == 2, result.stderr
    assert "refuses this worker's client" in result.stderr and "Traceback" not in result.stderr


def test_a_newer_server_s_upgrade_hint_goes_to_the_json_log_not_stdout(newer_server: str) -> None:
    script = (
        "import asyncio\n"
        "from worker.logging import configure_logging\n"
        "from activities.backends.skypilot_sdk import SkyPilotSdk\n"
        "configure_logging('json')\n"
        f"versions = asyncio.run(SkyPilotSdk({newer_server!r}).versions())\n"
        "assert versions.server_version == '0.16.0', versions\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    (hint,) = [
        e for e in events if e["event"] == "skypilot.client_log" and "newer than your client" in e["message"]
    ]
    assert hint["level"] == "warning" and "\x1b[" not in hint["message"]


def test_a_server_of_a_newer_release_within_the_api_range_is_healthy(newer_server: str) -> None:
    assert skypilot_health(newer_server) is None


def test_an_unreachable_server_is_reported_as_such() -> None:
    from activities.backends.skypilot_sdk import SkyPilotSdk

    versions = asyncio.run(SkyPilotSdk(f"http://127.0.0.1:{free_port()}").versions())
    assert versions.server_state is ServerState.UNHEALTHY and not versions.refused

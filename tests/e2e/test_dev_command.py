"""`npaflow dev`: says where the UI and server are, and Ctrl-C stops the worker first, quietly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.test_cli_runs import NPAFLOW
from tests.helpers import free_port, in_the_foreground

pytestmark = pytest.mark.e2e


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_dev_prints_the_ui_and_address_and_ctrl_c_stops_worker_then_server_quietly(tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    environ = {**os.environ, "NPAFLOW_HOME": str(tmp_path / "home"), "NPAFLOW_DEPLOYMENT": "none"}
    environ.pop("TEMPORAL_ADDRESS", None)
    dev = subprocess.Popen(
        [NPAFLOW, "dev", "--port", str(port), "--ui-port", str(ui_port)],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell's foreground job has
        preexec_fn=in_the_foreground,
    )
    try:
        banner = dev.stdout.readline() + dev.stdout.readline() if dev.stdout else ""
        deadline = time.monotonic() + 120
        while not (tmp_path / "home" / "worker-id").exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(3)  # the worker polls
        os.killpg(dev.pid, signal.SIGINT)  # what Ctrl-C sends to the foreground group
        _, err = dev.communicate(timeout=60)
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
    assert f"Temporal UI: http://127.0.0.1:{ui_port}" in banner
    assert f"export TEMPORAL_ADDRESS=127.0.0.1:{port}" in banner
    assert dev.returncode == 0, err
    assert "Traceback" not in err and "WARN" not in err and "transport error" not in err.lower(), err
    deadline = time.monotonic() + 30
    while listening(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not listening(port)  # the server went down after the worker


def test_dev_whose_ui_port_is_taken_stops_at_once_naming_the_port(tmp_path: Path) -> None:
    port = free_port()
    environ = {**os.environ, "NPAFLOW_HOME": str(tmp_path / "home"), "NPAFLOW_DEPLOYMENT": "none"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ui_port = taken.getsockname()[1]
        dev = subprocess.run(
            [NPAFLOW, "dev", "--port", str(port), "--ui-port", str(ui_port)],
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert dev.returncode == 2
    assert dev.stderr.startswith("npaflow: error: the Temporal dev server stopped at start: ")
    assert f"{ui_port}" in dev.stderr and "address already in use" in dev.stderr
    assert not listening(port)


def test_dev_whose_port_a_web_server_holds_stops_at_once_instead_of_serving_a_worker_against_it(
    tmp_path: Path,
) -> None:
    web = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    environ = {**os.environ, "NPAFLOW_HOME": str(tmp_path / "home"), "NPAFLOW_DEPLOYMENT": "none"}
    try:
        dev = subprocess.run(
            [NPAFLOW, "dev", "--port", str(web.server_address[1]), "--ui-port", str(free_port())],
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        web.shutdown()
        web.server_close()
    assert dev.returncode == 2
    assert dev.stderr == (
        f"npaflow: error: port {web.server_address[1]} is taken by a program that does not answer as a "
        "Temporal server, so npaflow dev can neither start one there nor use it (hint: pick a free port "
        "with --port)\n"
    )


def _dev(port: int, ui_port: int, home: Path, build: str) -> subprocess.Popen[str]:
    environ = {**os.environ, "NPAFLOW_HOME": str(home), "NPAFLOW_BUILD_ID": build}
    for name in ("TEMPORAL_ADDRESS", "NPAFLOW_DEPLOYMENT"):
        environ.pop(name, None)
    return subprocess.Popen(
        [NPAFLOW, "dev", "--port", str(port), "--ui-port", str(ui_port)],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=in_the_foreground,
    )


def _until_started(dev: subprocess.Popen[str]) -> str:
    seen = ""
    while dev.stdout and "worker.started" not in seen:
        line = dev.stdout.readline()
        assert line, seen
        seen += line
    return seen


def test_a_second_dev_that_joined_and_left_gives_the_queue_back_to_the_first(tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    first = _dev(port, ui_port, tmp_path / "a", "build-a")
    try:
        _until_started(first)
        second = _dev(port, free_port(), tmp_path / "b", "build-b")
        try:
            assert "starting only the worker" in _until_started(second)
        finally:
            os.killpg(second.pid, signal.SIGINT)
            said, _ = second.communicate(timeout=60)
        assert "deployment.handed_back" in said and "build_id=build-a" in said
        environ = {**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"}
        spec = tmp_path / "quick.yaml"
        spec.write_text(
            "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: quick}\n"
            "states:\n  one: {terminal: true, run: {shell: 'true'}}\n"
        )
        run = subprocess.run(
            [NPAFLOW, "submit", str(spec), "--wait", "--poll-seconds", "0.2"],
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
    finally:
        os.killpg(first.pid, signal.SIGINT)
        first.communicate(timeout=60)

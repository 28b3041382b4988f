"""Stopping the test API server leaves none of its processes, even ones /proc cannot tell by HOME.

A leftover request executor kept SkyPilot's consolidation lock after a restart in
CI, so the restarted server never started a jobs controller and every later job
stayed PENDING. These stand-ins behave as those executors do: they survive
SIGTERM, and their environment no longer shows HOME (setproctitle overwrites it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.skypilot_server import SkyApiServer

pytestmark = pytest.mark.integration

#: A stand-in server: starts one executor-like child (same group or own session), which says
#: when it ignores SIGTERM.
LEADER = """
import subprocess, sys, time
child = (
    "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    "open('child.pid', 'w').write(str(os.getpid())); time.sleep(600)"
)
subprocess.Popen([sys.executable, "-c", child], env={}, start_new_session=sys.argv[1] == "own-session")
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def started_stand_in(home: Path, placement: str) -> tuple[SkyApiServer, int]:
    home.mkdir()
    server = SkyApiServer(home)
    server._spawn([sys.executable, "-c", LEADER, placement], home / "leader.log")
    pid_file = home / "child.pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, (home / "leader.log").read_text()
        time.sleep(0.05)
    child = int(pid_file.read_text())
    assert b"HOME=" not in Path(f"/proc/{child}/environ").read_bytes()
    return server, child


def test_a_child_in_the_server_s_group_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    server, child = started_stand_in(tmp_path / "home", "same-group")
    server.stop()
    assert not alive(child)


def test_a_child_that_left_the_group_and_runs_in_the_server_s_home_is_killed(tmp_path: Path) -> None:
    server, child = started_stand_in(tmp_path / "home", "own-session")
    assert os.getpgid(child) != server.processes[0].pid
    server.stop()
    assert not alive(child)


def test_a_process_outside_the_server_s_home_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], cwd=tmp_path)
    try:
        SkyApiServer(tmp_path / "home").stop()
        assert alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()

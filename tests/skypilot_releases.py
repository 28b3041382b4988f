"""The SkyPilot API server releases the live-server tests run against, each from a venv of its own.

The worker's SDK is always this venv's (the version constraints.txt pins); the
servers are that same release (from this venv) and the oldest supported one,
installed on first use into `.venv-skypilot-<version>` at the checkout's root
from its frozen constraints (tests/fixtures/skypilot/server-<version>-constraints.txt),
one process at a time, as a team upgrading server and workers in either order
would run them.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, skip_unless_all_required

#: The oldest release npaflow supports, tested as a server against this venv's SDK.
OLDEST = "0.12.2"
FIXTURES = ROOT / "tests" / "fixtures" / "skypilot"


def installed_version() -> str:
    """The SkyPilot release in this venv (the workers' SDK)."""
    from importlib.metadata import version

    return version("skypilot")


def server_versions() -> list[str]:
    """The server releases to test: the installed one, then the oldest supported one."""
    installed = installed_version()
    return [installed] if installed == OLDEST else [installed, OLDEST]


def server_python(version: str) -> Path:
    """The Python that runs a `version` API server, creating its venv on first use."""
    if version == installed_version():
        return Path(sys.executable)
    venv = ROOT / f".venv-skypilot-{version}"
    python = venv / "bin" / "python"
    with open(ROOT / f".venv-skypilot-{version}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _has_release(python, version):
            _create(venv, version)
    return python


def _has_release(python: Path, version: str) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "from importlib.metadata import version; print(version('skypilot'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() == version


def _create(venv: Path, version: str) -> None:
    constraints = FIXTURES / f"server-{version}-constraints.txt"
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(constraints), f"skypilot=={version}"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            skip_unless_all_required(
                f"could not install a SkyPilot {version} API server into {venv} "
                f"({done.stderr.strip()[-400:]}): it needs the package index pip uses"
            )

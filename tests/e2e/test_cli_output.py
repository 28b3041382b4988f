"""Output a pipe or a missing extra cannot turn into a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import EXAMPLES, NPAFLOW, ROOT

pytestmark = pytest.mark.e2e

WITHOUT_SKY = """
import sys
from pathlib import Path
sys.modules["sky"] = None  # as if the skypilot extra were not installed
from npaflow.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("command", [["schema"], ["plan-spec", str(EXAMPLES / "gate-loop.yaml"), "--json"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(command: list[str]) -> None:
    process = subprocess.Popen([NPAFLOW, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `npaflow ... | head -0`
    err = process.stderr.read().decode()
    assert process.wait() == 141  # 128 + SIGPIPE, as a shell reports git's
    assert err == ""


@pytest.mark.parametrize(
    "command", [["schema"], ["--version"], ["validate-spec", str(EXAMPLES / "gate-loop.yaml")]]
)
def test_output_to_a_full_device_is_one_line_and_exit_74(command: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run([NPAFLOW, *command], stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert result.returncode == 74  # EX_IOERR
    assert result.stderr == (
        "npaflow: error: cannot write the output: No space left on device (free space or redirect it)\n"
    )


def test_a_worker_offering_skypilot_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SKY, "worker", "--backend", "skypilot", "--address", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "NPAFLOW_HOME": str(tmp_path),
            "SKYPILOT_API_SERVER_ENDPOINT": "http://127.0.0.1:1",
        },
        check=False,
    )
    assert result.returncode == 2
    assert "pip install 'npaflow[skypilot]'" in result.stderr
    assert "Traceback" not in result.stderr and "cannot reach the Temporal server" not in result.stderr

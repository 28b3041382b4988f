"""Every dev server npaflow starts lifts the one shard's 20 reads/s cap on its task queues."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from npaflow.temporal.dev_server import DEV_SERVER_FLAGS
from worker import commands


class Started(Exception):
    """Raised by the stand-in Popen once it has seen the command line."""


def test_the_flags_raise_the_transfer_timer_and_visibility_read_rates() -> None:
    values = DEV_SERVER_FLAGS[1::2]
    assert DEV_SERVER_FLAGS[0::2] == ("--dynamic-config-value",) * 3
    assert [value.split("=")[0] for value in values] == [
        "history.transferProcessorMaxPollRPS",
        "history.timerProcessorMaxPollRPS",
        "history.visibilityProcessorMaxPollRPS",
    ]
    assert all(int(value.split("=")[1]) > 20 for value in values)


def test_npaflow_dev_starts_its_server_with_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def popen(command: list[str], **_: Any) -> subprocess.Popen[bytes]:
        seen.append(command)
        raise Started

    monkeypatch.setenv("NPAFLOW_HOME", str(tmp_path))
    monkeypatch.setattr(commands.subprocess, "Popen", popen)
    with pytest.raises(Started):
        commands._start_dev_server(7233, 8233, tmp_path / "temporal")
    assert list(tmp_path.glob("dev-server-starting-*")) == []  # a start that failed leaves no marker
    command = seen[0]
    flags = list(DEV_SERVER_FLAGS)
    assert any(command[i : i + len(flags)] == flags for i in range(len(command)))

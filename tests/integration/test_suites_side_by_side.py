"""Two checkouts' suites on one host: what they share is taken in turns, not fought over."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.skypilot_server import host_turn

pytestmark = pytest.mark.integration


def test_a_second_live_server_waits_for_the_first_ones_turn_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock, order = tmp_path / "turn.lock", []

    def second() -> None:
        with host_turn(lock):
            order.append("second in")

    with host_turn(lock):
        order.append("first in")
        waiter = threading.Thread(target=second)
        waiter.start()
        deadline = time.monotonic() + 30
        while "waiting for another suite" not in capsys.readouterr().err and time.monotonic() < deadline:
            time.sleep(0.05)
        order.append("first out")
    waiter.join(timeout=30)
    assert order == ["first in", "first out", "second in"]

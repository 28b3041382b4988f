"""A SkyPilot call that fails does not leave the worker's traces cut to one line."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from activities.backends.skypilot_sdk import whole_traces_kept


@pytest.fixture(autouse=True)
def restored_limit() -> Iterator[None]:
    limit = getattr(sys, "tracebacklimit", None)
    yield
    if limit is None:
        vars(sys).pop("tracebacklimit", None)
    else:
        sys.tracebacklimit = limit


async def unreachable_api_server() -> None:
    from sky.utils import ux_utils

    with ux_utils.print_exception_no_traceback():  # as SkyPilot's health check does
        raise ConnectionError("could not connect to the SkyPilot API server")


async def test_skypilot_itself_leaves_the_traceback_limit_at_zero_after_an_error() -> None:
    with pytest.raises(ConnectionError):
        await unreachable_api_server()
    assert sys.tracebacklimit == 0  # what the wrapper is for; if SkyPilot fixes it, drop the wrapper


async def test_an_sdk_call_that_fails_leaves_no_traceback_limit_behind() -> None:
    with pytest.raises(ConnectionError):
        await whole_traces_kept(unreachable_api_server)()
    assert getattr(sys, "tracebacklimit", None) is None

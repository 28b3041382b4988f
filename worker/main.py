"""The worker process: `npaflow worker` / `python -m worker`.

Three Temporal workers share one client: workflows and short activities on the
main task queue; heartbeating pollers on `<queue>-poll` so they never starve
launches; and `<queue>@<worker id>`, where only this worker serves the
activities of the local jobs its host holds.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta

import structlog
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner

from activities.backends.base import Backend
from activities.backends.local import LocalBackend
from activities.context import ActivityContext
from activities.storage import S3Storage, StorageRouter
from npaflow.errors import UsageError
from npaflow.runtime.contract import SEARCH_ATTRIBUTE_TYPES, QueueKind, poll_task_queue
from npaflow.runtime.metrics import install as install_metrics
from npaflow.runtime.request import BackendName
from npaflow.temporal.client import WORKER_CONNECT_PATIENCE_SECONDS, connect
from npaflow.temporal.target import TemporalTarget, temporal_target
from worker.config import WorkerConfig, warn_unknown_variables
from worker.deployment import Deployment, deployment_from
from worker.dev_takeover import adopted
from worker.input_count import InputCount
from worker.logging import configure_logging
from worker.metrics import MetricsEndpoint, watch_quota_pools, watch_suspended_runs, worker_runtime
from worker.namespace import require_namespace
from worker.queue_owner import check_queue_owner
from worker.reconciler import RECONCILE_SECONDS, sweeping
from worker.registry import WORKFLOWS, activities_for
from worker.skypilot_check import announce_skypilot
from worker.stranded_runs import warn_of_stranded_runs
from workflows_def import SEARCH_ATTRIBUTE_KEYS

log = structlog.get_logger(__name__)

#: Workflow tasks a worker works on at once (SDK default 100: a loaded worker held them
#: past their 10 s start-to-close).
WORKFLOW_TASK_SLOTS = 20
#: Workflow-task pollers, and the share of them that takes new runs from the shared queue.
#: A run asks ~6 tasks of its worker's sticky queue per task on the shared one; the SDK's
#: 1 in 5 took on new runs faster than a loaded worker finished its own, whose tasks then
#: aged past the sticky 10 s (658 timeouts at 1,000 runs on two workers; 1 in 10: none).
WORKFLOW_TASK_POLLS = 10
NEW_RUN_POLL_SHARE = 0.1


async def register_search_attributes(client: Client) -> None:
    """Register the search attributes the workflow upserts, then check that all of them exist.

    A missing one would fail every workflow task that upserts it, so a worker that can
    neither register nor find them refuses to start, naming the command that fixes it.

    Raises:
        UsageError: some attribute is missing and could not be registered.
    """
    errors: dict[str, str] = {}
    for key in SEARCH_ATTRIBUTE_KEYS:
        request = AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={key.name: IndexedValueType.ValueType(key.indexed_value_type.value)},
        )
        try:
            await client.operator_service.add_search_attributes(request)
        except RPCError as exc:
            if "already" not in str(exc).lower():
                errors[key.name] = str(exc)
    if not errors:
        return
    try:
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
    except RPCError as exc:
        log.warning("worker.search_attributes_unverified", errors=errors, error=str(exc))
        return
    present = set(listed.custom_attributes) | set(listed.system_attributes)
    missing = [key for key in SEARCH_ATTRIBUTE_KEYS if key.name not in present]
    if missing:
        commands = "; ".join(
            f"temporal operator search-attribute create --namespace {client.namespace} "
            f"--name {key.name} --type {SEARCH_ATTRIBUTE_TYPES[key.name]}"
            for key in missing
        )
        raise UsageError(
            f"search attribute(s) {', '.join(k.name for k in missing)} missing in namespace "
            f"{client.namespace} and not registrable by this worker "
            f"({errors.get(missing[0].name, 'permission denied')}) (hint: an operator runs: "
            f"{commands})"
        )


def build_backends(config: WorkerConfig) -> dict[BackendName, Backend]:
    """Instantiate the backends this worker offers (SkyPilot's SDK is imported only if asked for)."""
    backends: dict[BackendName, Backend] = {}
    if BackendName.LOCAL in config.backends:
        backends[BackendName.LOCAL] = LocalBackend(config.home, config.worker_id, job_env=config.job_env)
    if BackendName.SKYPILOT in config.backends:
        from activities.backends.skypilot import SkyPilotBackend
        from activities.backends.skypilot_sdk import SkyPilotSdk

        backends[BackendName.SKYPILOT] = SkyPilotBackend(
            SkyPilotSdk(config.skypilot_endpoint), poll_interval=config.skypilot_poll_seconds
        )
    return backends


def build_context(config: WorkerConfig) -> ActivityContext:
    """The dependencies every activity shares."""
    return ActivityContext(
        home=config.home,
        backends=build_backends(config),
        worker_id=config.worker_id,
        task_queue=config.task_queue,
        storage=StorageRouter(S3Storage(config.aws_endpoint_url)),
        aws_endpoint_url=config.aws_endpoint_url,
        catalog_paths=list(config.catalog_paths),
        ledger_root=config.ledger_root,
        notify_webhooks=config.notify_urls,
        ui_url=config.ui_url,
        quota_pool=config.quota_pool,
        page_url=config.page_url,
    )


def workflow_runner() -> WorkflowRunner:
    """Workflows run unsandboxed: the sandbox checked none of npaflow's code, at a third of its CPU.

    Every module the workflows use (npaflow, workflows_def, yaml, structlog) had to be
    passed through the sandbox (re-importing workflows_def per instance cost most of a
    run's start), and passed-through code escapes its restrictions, so the sandbox
    restricted nothing of ours while it wrapped every activation and every payload
    (measured: 15 of 53 ms worker CPU per wave at 50 concurrent runs). Determinism is
    kept where it can be checked: workflow and pure code import no clock, randomness,
    I/O or environment and never read the wall clock (tests/unit/test_layering.py),
    and recorded histories replay (tests/histories, `npaflow replay-check`).
    """
    return UnsandboxedWorkflowRunner()


@asynccontextmanager
async def running_workers(
    client: Client,
    context: ActivityContext,
    max_pollers: int = 1000,
    deployment: Deployment | None = None,
    *,
    reconcile_seconds: float = RECONCILE_SECONDS,
) -> AsyncIterator[None]:
    """Run the main, poller and own-queue workers, and the orphan sweep, for the block.

    With a deployment, all three join its version: the activities of a run pinned to
    a build run on that build's workers too.
    """
    versioned = deployment.config() if deployment else None
    main = Worker(
        client,
        task_queue=context.task_queue,
        workflows=WORKFLOWS,
        activities=activities_for(context, QueueKind.MAIN),
        workflow_runner=workflow_runner(),
        interceptors=[InputCount()],
        graceful_shutdown_timeout=timedelta(seconds=10),
        deployment_config=versioned,
        max_concurrent_workflow_tasks=WORKFLOW_TASK_SLOTS,
        max_concurrent_workflow_task_polls=WORKFLOW_TASK_POLLS,
        nonsticky_to_sticky_poll_ratio=NEW_RUN_POLL_SHARE,
    )
    pollers = Worker(
        client,
        task_queue=poll_task_queue(context.task_queue),
        activities=activities_for(context, QueueKind.POLL),
        max_concurrent_activities=max_pollers,
        graceful_shutdown_timeout=timedelta(seconds=2),
        deployment_config=versioned,
    )
    own = Worker(
        client,
        task_queue=context.worker_queue,
        activities=activities_for(context, QueueKind.WORKER),
        max_concurrent_activities=max_pollers,
        graceful_shutdown_timeout=timedelta(seconds=2),
        deployment_config=versioned,
    )
    async with AsyncExitStack() as stack:
        for worker in (main, pollers, own):
            await stack.enter_async_context(worker)
        await stack.enter_async_context(sweeping(client, context, reconcile_seconds))
        yield


def _log_started(
    target: TemporalTarget, config: WorkerConfig, context: ActivityContext, deployment: Deployment | None
) -> None:
    log.info(
        "worker.started",
        address=target.address,
        namespace=target.namespace,
        tls=target.secured,
        temporal_settings=target.source,
        task_queue=config.task_queue,
        worker_id=config.worker_id,
        worker_queue=context.worker_queue,
        backends=[b.value for b in config.backends],
        home=str(config.home),
        ledger_root=context.ledger_base(),
        deployment_version=deployment.version if deployment else "unversioned",
    )
    warn_unknown_variables(os.environ)


async def serve(config: WorkerConfig, stop: asyncio.Event | None = None, *, take_over: bool = False) -> None:
    """Serve until SIGINT/SIGTERM (or `stop`), then shut down gracefully.

    `take_over` (`npaflow dev`) makes this build current even when another one is.
    """
    config.check()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    target = temporal_target(config.address, config.namespace, config.profile)
    context = build_context(config)  # a backend that cannot be built fails before connecting
    await announce_skypilot(context.backends)
    metrics = MetricsEndpoint(config.metrics_address) if config.metrics_address else None
    client = await connect(
        target,
        patience=WORKER_CONNECT_PATIENCE_SECONDS,
        runtime=metrics.runtime if metrics else worker_runtime(),
        service="npaflow-worker",
    )
    await require_namespace(client)
    await register_search_attributes(client)
    deployment = deployment_from(config.deployment, config.build_id)
    if deployment is not None:
        await check_queue_owner(client, config.task_queue, deployment)
    watchers: list[asyncio.Task[None]] = []
    if metrics is not None:
        await metrics.start()
        install_metrics(metrics.sink)
        watchers = [
            asyncio.create_task(watch_suspended_runs(client, metrics.sink)),
            asyncio.create_task(watch_quota_pools(client, metrics.sink)),
        ]
    async with (
        running_workers(
            client,
            context,
            config.max_concurrent_pollers,
            deployment,
            reconcile_seconds=config.reconcile_seconds,
        ),
        adopted(client, deployment, config.task_queue, take_over=take_over),
    ):
        _log_started(target, config, context, deployment)
        if take_over:  # in dev every edit is a new build: say which open runs the last one left
            await warn_of_stranded_runs(client, deployment, config.task_queue)
        await stop.wait()
    for watcher in watchers:
        watcher.cancel()
    if metrics is not None:
        install_metrics(None)
        await metrics.stop()
    log.info("worker.stopped")


def main() -> None:
    """`python -m worker`: serve with configuration from the environment."""
    config = WorkerConfig.from_env()
    configure_logging(config.log_format)
    asyncio.run(serve(config))

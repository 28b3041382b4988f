"""`npaflow deployment promote|status` and `npaflow replay-check`: the rollout commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.client import Client

from npaflow.errors import UsageError
from npaflow.options import (
    ConnectionOptions,
    DeploymentStatusOptions,
    PromoteOptions,
    ReplayCheckOptions,
)
from npaflow.temporal.client import connect
from npaflow.temporal.target import temporal_target
from worker.config import WorkerConfig
from worker.deployment import Deployment, deployment_from
from worker.replay import DEFAULT_QUERY, ReplayReport, each, histories_from, histories_in, replay
from worker.rollout import promote, status_text, versions


async def _client(options: ConnectionOptions) -> Client:
    return await connect(temporal_target(options.address, options.namespace, options.profile))


def _deployment() -> Deployment:
    config = WorkerConfig.from_env(create_id=False)
    deployment = deployment_from(config.deployment, config.build_id)
    if deployment is None:
        raise UsageError("worker versioning is off (NPAFLOW_DEPLOYMENT=none): there is no deployment")
    return deployment


def run_replay_check(options: ReplayCheckOptions) -> int:
    """Exit 0 when every history replays on this code, 1 when any does not."""

    async def check() -> ReplayReport:
        total = ReplayReport()
        if options.histories:
            directory = Path(options.histories)
            if not directory.is_dir():
                raise UsageError(f"--histories {directory}: not a directory of exported JSON histories")
            part = await replay(each(histories_in(directory)))
            total.replayed, total.failures = part.replayed, dict(part.failures)
        if options.query or not options.histories:
            client = await _client(options)
            part = await replay(histories_from(client, options.query or DEFAULT_QUERY, options.limit))
            total.replayed += part.replayed
            total.failures.update(part.failures)
        return total

    report = asyncio.run(check())
    print("\n".join(report.lines()))
    return 1 if report.failures else 0


def run_promote(options: PromoteOptions) -> int:
    """Replay-check, then route new runs to BUILD_ID."""
    deployment = _deployment()

    async def go() -> tuple[ReplayReport, list[str]]:
        return await promote(
            await _client(options), deployment, options.build_id, ramp=options.ramp, limit=options.limit
        )

    report, pinned = asyncio.run(go())
    target = f"ramping {options.ramp:g}% of new runs to" if options.ramp is not None else "current:"
    print(f"{report.lines()[0]}; deployment {deployment.name} {target} {options.build_id}")
    if pinned:
        print(f"{len(pinned)} open run(s) stay on the build that started them: {', '.join(pinned[:20])}")
    return 0


def run_deployment_status(options: DeploymentStatusOptions) -> int:
    """Print each version with its status, open runs and whether its workers poll."""
    name = _deployment().name

    async def go() -> str:
        return status_text(name, await versions(await _client(options), name), as_json=options.json_output)

    print(asyncio.run(go()))
    return 0

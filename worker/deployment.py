"""Worker Deployment versions: every worker joins `NPAFLOW_DEPLOYMENT` as `NPAFLOW_BUILD_ID`.

Runs are PINNED to the build that started them: a run lasts days, and pinning
means a deploy never replays an open history on code that cannot reproduce
it; old builds drain as their runs end. A new build takes new runs only once
promoted (`npaflow deployment promote`, after a replay check); the very first
version of a deployment becomes current by itself, so a fresh install works.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import structlog
from temporalio.api.deployment.v1 import WorkerDeploymentVersion as ApiDeploymentVersion
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentVersionRequest,
    SetWorkerDeploymentCurrentVersionRequest,
    SetWorkerDeploymentRampingVersionRequest,
)
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.service import RPCError
from temporalio.worker import WorkerDeploymentConfig

from npaflow.temporal.deployments import current_build, describe
from npaflow.temporal.serving import Build, queue_pollers, serves

log = structlog.get_logger()

ROOT = Path(__file__).resolve().parents[1]
#: The code whose change can change a run's command sequence: it names the build.
WORKFLOW_CODE = ("npaflow", "workflows_def")
#: Values of NPAFLOW_DEPLOYMENT that turn versioning off.
OFF = ("", "none", "off")


@dataclass(frozen=True)
class Deployment:
    """This worker's deployment name and build id."""

    name: str
    build_id: str

    @property
    def version(self) -> str:
        """`<deployment>:<build>`, as Temporal's visibility and CLI spell a version."""
        return f"{self.name}:{self.build_id}"

    def config(self) -> WorkerDeploymentConfig:
        """The SDK's options: versioned, runs pinned by default."""
        return WorkerDeploymentConfig(
            version=WorkerDeploymentVersion(deployment_name=self.name, build_id=self.build_id),
            use_worker_versioning=True,
            default_versioning_behavior=VersioningBehavior.PINNED,
        )


def default_build_id() -> str:
    """The package version plus a hash of the workflow code, so two codes never share an id."""
    try:
        version = metadata.version("npaflow")
    except metadata.PackageNotFoundError:
        version = "0"
    digest = hashlib.sha256()
    for package in WORKFLOW_CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return f"{version}-{digest.hexdigest()[:12]}"


def deployment_from(name: str, build_id: str) -> Deployment | None:
    """The deployment a worker joins; None when versioning is off (NPAFLOW_DEPLOYMENT=none)."""
    if name.strip().lower() in OFF:
        return None
    return Deployment(name=name.strip(), build_id=build_id.strip() or default_build_id())


async def adopt_if_first(
    client: Client, deployment: Deployment, *, take_over: bool = False, wait_seconds: float = 30.0
) -> bool:
    """Make this version current when the deployment has none yet (a fresh install).

    Later versions never become current here: that is `npaflow deployment promote`;
    except with `take_over` (`npaflow dev`, one worker on one machine, where every
    code edit is a new build). Returns True when this call made it current.
    """
    deadline = asyncio.get_running_loop().time() + wait_seconds
    while True:
        described = await describe(client, deployment.name)
        current = current_build(described)
        if current == deployment.build_id or (current and not take_over):
            return False
        known = described is not None and any(
            s.deployment_version.build_id == deployment.build_id
            for s in described.worker_deployment_info.version_summaries
        )
        if known and described is not None:
            try:
                await set_current(client, deployment.name, deployment.build_id, described.conflict_token)
            except RPCError as exc:  # another worker won the race: fine
                log.info("deployment.adopt_skipped", reason=exc.message[:200])
                return False
            log.info("deployment.first_version_current", version=deployment.version)
            return True
        if asyncio.get_running_loop().time() > deadline:
            log.warning("deployment.not_registered", version=deployment.version)
            return False
        await asyncio.sleep(1.0)


async def set_current(client: Client, name: str, build_id: str, conflict_token: bytes = b"") -> None:
    """Route every new run of the deployment to `build_id`."""
    await client.workflow_service.set_worker_deployment_current_version(
        SetWorkerDeploymentCurrentVersionRequest(
            namespace=client.namespace,
            deployment_name=name,
            build_id=build_id,
            conflict_token=conflict_token,
            identity="npaflow",
            # Each worker also serves `<queue>@<worker id>`, its own: the new build's workers
            # have other ones, and runs pinned to the old build keep using the old ones.
            ignore_missing_task_queues=True,
        )
    )


async def set_ramping(client: Client, name: str, build_id: str, percent: float) -> None:
    """Route `percent` of new runs to `build_id` (the rest stay on the current version)."""
    await client.workflow_service.set_worker_deployment_ramping_version(
        SetWorkerDeploymentRampingVersionRequest(
            namespace=client.namespace,
            deployment_name=name,
            build_id=build_id,
            percentage=percent,
            identity="npaflow",
            ignore_missing_task_queues=True,
        )
    )


async def build_is_polled(client: Client, name: str, build_id: str) -> bool:
    """True when a live worker of this build polls one of its task queues now.

    Raises:
        RPCError: the server could not say.
    """
    version = await client.workflow_service.describe_worker_deployment_version(
        DescribeWorkerDeploymentVersionRequest(
            namespace=client.namespace,
            deployment_version=ApiDeploymentVersion(deployment_name=name, build_id=build_id),
        )
    )
    for queue in version.worker_deployment_version_info.task_queue_infos:
        if any(serves(poller, Build(name, build_id)) for poller in await queue_pollers(client, queue.name)):
            return True
    return False

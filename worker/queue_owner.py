"""Which Worker Deployment a task queue routes its new runs to, checked before a worker joins it.

A task queue belongs to one deployment's current version at a time, and making
a version current takes the queue from whichever deployment had it. A worker
started with a mistyped `NPAFLOW_DEPLOYMENT` would, as the first version of
its new deployment, make itself current, and every new run on the queue would
then wait for a deployment that has no workers. So a worker whose deployment
is not the queue's owner refuses to start.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from npaflow.errors import UsageError
from npaflow.runtime.contract import EnvVar
from npaflow.temporal.deployments import UNVERSIONED
from worker.deployment import Deployment


async def queue_owner(client: Client, task_queue: str) -> str:
    """The deployment whose current version serves `task_queue` ("" when none does)."""
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    info = response.versioning_info
    if info.current_deployment_version.deployment_name:
        return info.current_deployment_version.deployment_name
    version = info.current_version
    if not version or version == UNVERSIONED:
        return ""
    return version.partition(":" if ":" in version else ".")[0]  # `<deployment>:<build>` (older: `.`)


async def check_queue_owner(client: Client, task_queue: str, deployment: Deployment) -> None:
    """Refuse to join a task queue that another deployment serves.

    Raises:
        UsageError: the queue's runs go to another deployment's current version.
    """
    owner = await queue_owner(client, task_queue)
    if owner and owner != deployment.name:
        variable = EnvVar.DEPLOYMENT.value
        raise UsageError(
            f"task queue {task_queue!r} sends its runs to Worker Deployment {owner!r}, and this "
            f"worker joins {deployment.name!r} ({variable}), so it would get none of them, and "
            f"making its version current would take the queue from {owner!r} (hint: set "
            f"{variable}={owner}; or, if {owner!r} took the queue by mistake, give it back with "
            f'\'temporal worker deployment set-current-version --deployment-name "{owner}" '
            "--unversioned')"
        )

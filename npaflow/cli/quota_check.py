"""Quota is arithmetic, checked first: a wave bigger than its pool is refused before anything starts."""

from __future__ import annotations

from temporalio.client import Client

from npaflow.catalog.models import ToolCatalog
from npaflow.cli.quota_handler import pool_status
from npaflow.document.models import WorkflowSpec
from npaflow.errors import UsageError
from npaflow.plan import spec_plans
from npaflow.runtime.gpu_demand import gpus_of, wave_accelerators
from npaflow.runtime.request import RunRequest


def wave_demands(spec: WorkflowSpec, catalog: ToolCatalog, accelerator: str = "") -> dict[str, int]:
    """Wave key -> GPUs it holds at once, on every path the decisions can choose."""
    demands: dict[str, int] = {}
    for plan in spec_plans(spec, catalog):
        for wave in plan.waves:
            demands[str(wave.key)] = gpus_of(wave_accelerators(wave.steps), accelerator)
    return demands


async def check_quota(client: Client, request: RunRequest, spec: WorkflowSpec, catalog: ToolCatalog) -> None:
    """Refuse a run naming a pool that does not exist, or with a wave the pool can never hold.

    Raises:
        UsageError: required, available and shortfall of every wave that cannot fit.
    """
    claim = request.quota
    if claim is None or not claim.pool:
        return  # the workers' default pool (if any) is checked by the run, at each launch
    status = await pool_status(client, claim.pool)
    capacity = status.config.gpus
    kind = f" {status.config.accelerator}" if status.config.accelerator else ""
    too_big = {
        key: gpus
        for key, gpus in wave_demands(spec, catalog, status.config.accelerator).items()
        if gpus > capacity
    }
    if too_big:
        lines = [
            f"workflow {spec.name}: quota pool {claim.pool} holds {capacity}{kind} GPUs; nothing was started"
        ]
        lines += [
            f"  wave {key}: required {gpus}, available {capacity}, shortfall {gpus - capacity}"
            for key, gpus in too_big.items()
        ]
        lines.append(
            f"fix: npaflow quota set {claim.pool} --gpus N (N >= {max(too_big.values())}), or a smaller batch"
        )
        raise UsageError("\n".join(lines))

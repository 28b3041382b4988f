"""Quota is arithmetic, checked first: a wave bigger than its pool is refused before anything starts."""

from __future__ import annotations

import sys

from temporalio.client import Client

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import WorkflowSpec
from npaflow.errors import UsageError
from npaflow.plan import spec_plans
from npaflow.runtime.gpu_demand import gpus_of, wave_accelerators
from npaflow.runtime.request import RunRequest
from npaflow.temporal.pools import pool_status


def wave_demands(spec: WorkflowSpec, catalog: ToolCatalog) -> dict[str, dict[str, int]]:
    """Wave key -> accelerator type -> how many it holds at once, on every path the decisions can choose."""
    return {
        str(wave.key): wave_accelerators(wave.steps)
        for plan in spec_plans(spec, catalog)
        for wave in plan.waves
    }


def uncounted_warning(pool: str, accelerator: str, used: set[str]) -> str:
    """Why a pool of one type will not limit a run whose GPUs are all of other types ("" when it will)."""
    if not accelerator or not used or accelerator.lower() in {kind.lower() for kind in used}:
        return ""
    return (
        f"quota pool {pool} counts only {accelerator} GPUs and no wave of this run holds any "
        f"(it holds {', '.join(sorted(used))}): the pool does not limit this run; "
        "check the pool's --accelerator, or join the pool of those GPUs"
    )


async def check_quota(client: Client, request: RunRequest, spec: WorkflowSpec, catalog: ToolCatalog) -> None:
    """Refuse a run naming a pool that does not exist, or with a wave the pool can never hold.

    Warns when the pool counts a type no wave of the run holds (it would limit nothing).

    Raises:
        UsageError: required, available and shortfall of every wave that cannot fit.
    """
    claim = request.quota
    if claim is None or not claim.pool:
        return  # the workers' default pool (if any) is checked by the run, at each launch
    status = await pool_status(client, claim.pool)
    capacity, accelerator = status.config.gpus, status.config.accelerator
    demands = wave_demands(spec, catalog)
    used = {kind for demand in demands.values() for kind in demand}
    if warning := uncounted_warning(claim.pool, accelerator, used):
        sys.stderr.write(f"npaflow: warning: {warning}\n")
    too_big = {
        key: gpus for key, demand in demands.items() if (gpus := gpus_of(demand, accelerator)) > capacity
    }
    if too_big:
        kind = f" {accelerator}" if accelerator else ""
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

"""Which live jobs a worker's sweep asks about: npaflow's own, of this namespace and task queue."""

from __future__ import annotations

from collections.abc import Iterable

from npaflow.ids import RunId
from npaflow.runtime.reconcile.models import LiveJob


def orphan_candidates(
    jobs: Iterable[LiveJob], *, namespace: str, task_queue: str
) -> dict[RunId, list[LiveJob]]:
    """Live jobs this worker may reconcile, by run id.

    A job without an owner (launched before owners were recorded, or not by npaflow)
    and a job of another namespace or task queue (another deployment sharing the
    SkyPilot server) is never touched: only its own runs' workers can tell whether
    its run is open.
    """
    candidates: dict[RunId, list[LiveJob]] = {}
    for job in jobs:
        owner = job.owner
        if owner is None or owner.namespace != namespace or owner.task_queue != task_queue:
            continue
        if job.status.is_terminal():
            continue
        candidates.setdefault(owner.run_id, []).append(job)
    return candidates

"""The orphan sweep: every worker looks for live jobs whose run ended without its cleanup.

A run terminated from the Temporal UI, timed out, or failed by a bug never runs
its cleanup, so its jobs would run (and bill) unwatched. Every RECONCILE_SECONDS,
and once at start for what happened while no worker ran, each worker lists the
live jobs its backends hold (a local backend: this host's), asks Temporal about
each owner run, and hands the jobs of closed runs to that run's reconcile
workflow (workflows_def/helpers/reconcile.py), which cancels each once. Its
companion (worker/ledger_sweep.py) closes the ledgers such runs left open
when no job outlived them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog
from temporalio.client import Client
from temporalio.service import RPCError

from activities.context import ActivityContext
from npaflow.errors import NpaflowError
from npaflow.runtime.reconcile import LiveJob, OrphanBatch, orphan_candidates
from npaflow.runtime.vocabulary import RunEnding
from npaflow.temporal.run_standing import run_standing
from worker.ledger_sweep import LedgerSweep
from worker.reconcile_handoff import hand_to_reconciler

log = structlog.get_logger(__name__)

#: Seconds between sweeps: a job whose run ended behind npaflow's back is cancelled within
#: about this (plus the cancel's own verification), however the run ended.
RECONCILE_SECONDS = 20.0


class OrphanSweep:
    """One worker's sweep over the live jobs of its backends."""

    def __init__(self, client: Client, context: ActivityContext) -> None:
        self.client = client
        self.context = context

    async def sweep(self) -> int:
        """One pass; returns how many orphaned jobs it handed to reconcile workflows."""
        live: list[LiveJob] = []
        for backend in self.context.backends.values():
            try:
                live.extend(await backend.live_jobs())
            except NpaflowError as exc:
                log.warning("reconcile.jobs_unlisted", backend=backend.name.value, error=str(exc))
        candidates = orphan_candidates(
            live, namespace=self.client.namespace, task_queue=self.context.task_queue
        )
        handed = 0
        for run_id, jobs in candidates.items():
            standing = await run_standing(self.client, run_id)
            if standing.ending is RunEnding.OPEN:
                if not standing.known:
                    log.warning("reconcile.run_unknown", run_id=run_id, detail=standing.detail)
                continue
            batch = OrphanBatch(run_id=run_id, ending=standing.ending, jobs=[self._routed(j) for j in jobs])
            await hand_to_reconciler(self.client, self.context, batch)
            log.warning(
                "reconcile.orphans_found", run_id=run_id, ending=standing.ending.value, jobs=len(jobs)
            )
            handed += len(jobs)
        return handed

    def _routed(self, live: LiveJob) -> LiveJob:
        """A host-bound job's cancel runs on this worker's own queue (only its host reaches it)."""
        if not live.job.worker_id:
            return live
        job = live.job.model_copy(update={"worker_task_queue": self.context.worker_queue})
        return live.model_copy(update={"job": job})

    async def run(self, interval: float) -> None:
        """Sweep jobs, then ledgers left open, now and every `interval` s; a failed pass is logged."""
        ledgers = LedgerSweep(self.client, self.context)
        while True:
            for sweep in (self.sweep, ledgers.sweep):
                try:
                    await sweep()
                except (NpaflowError, RPCError) as exc:
                    log.warning("reconcile.sweep_failed", sweep=sweep.__qualname__, error=str(exc))
            await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def sweeping(client: Client, context: ActivityContext, interval: float) -> AsyncIterator[None]:
    """Run the sweep in the background for the block (no sweep when `interval` is 0)."""
    if interval <= 0:
        yield
        return
    task = asyncio.create_task(OrphanSweep(client, context).run(interval))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

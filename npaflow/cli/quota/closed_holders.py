"""Which of a pool's holders belong to runs that already ended (for `npaflow quota status`).

A closed run's GPUs come back only once its ledger shows every job ended (the pool
fails closed), so a hold can outlive its run: a job still running, a host no worker
reaches. The pool does not say which holds those are; this asks Temporal, one
describe per holding run, so the operator sees them and the way out.
"""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from npaflow.ids import RunId
from npaflow.quota import PoolStatus
from npaflow.runtime.vocabulary import RunEnding
from npaflow.temporal.run_standing import run_standing

#: Seconds each describe may take; a run not described in time is shown as it is (never "closed").
DESCRIBE_SECONDS = 3.0


async def closed_holders(client: Client, statuses: list[PoolStatus]) -> dict[str, str]:
    """Each holding run that has ended, with how ("gone" when Temporal no longer has it)."""
    runs = sorted({lease.request.run_id for status in statuses for lease in status.holders})
    endings = await asyncio.gather(*(_ending(client, run_id) for run_id in runs))
    return {run_id: ending for run_id, ending in zip(runs, endings, strict=True) if ending}


async def _ending(client: Client, run_id: str) -> str:
    """How the run's newest execution ended ("" while it runs, or when Temporal cannot say)."""
    try:
        standing = await asyncio.wait_for(run_standing(client, RunId(run_id)), DESCRIBE_SECONDS)
    except TimeoutError:
        return ""
    return "" if standing.ending is RunEnding.OPEN else standing.ending.value.replace("_", " ")


def closed_note(pool: str, run_id: str, ending: str) -> str:
    """What a hold of an ended run says: why it is still held, and the way out."""
    return (
        f"the run {ending}: its GPUs come back once its ledger shows every job ended "
        f"(`npaflow quota release {pool} {run_id}` lists what it still runs)"
    )

"""`npaflow quota release POOL RUN`: free the GPUs of a run that ended without its code.

The pool gives a closed run's GPUs back by itself once the run's ledger shows every
job ended; this is for an operator who knows better (a job whose host is gone):
it says which jobs the ledger still holds in flight, and refuses while there are
any unless `--force`.
"""

from __future__ import annotations

import json

from npaflow.errors import UsageError
from npaflow.options.features import QuotaOptions
from npaflow.quota import ReleaseAnswer, ReleaseRun
from npaflow.quota.messages import RELEASE_RUN_UPDATE, pool_workflow_id
from npaflow.temporal.client import connect_to
from npaflow.temporal.pools import pool_status


async def release(options: QuotaOptions) -> int:
    """Release the run's leases (exit 2 when the pool refuses, with why and what still runs)."""
    client = await connect_to(options)
    await pool_status(client, options.pool)  # names a pool that does not exist, or that nobody serves
    handle = client.get_workflow_handle(pool_workflow_id(options.pool))
    answer = await handle.execute_update(
        RELEASE_RUN_UPDATE, ReleaseRun(run_id=options.run_id, force=options.force), result_type=ReleaseAnswer
    )
    if answer.refused:
        raise UsageError(release_refusal(options.pool, options.run_id, answer))
    if options.as_json:
        print(json.dumps(answer.model_dump(mode="json")))
        return 0
    print(f"released {len(answer.released)} lease(s) of run {options.run_id} in quota pool {options.pool}")
    if answer.live_jobs:
        print(f"released with --force while its ledger holds in flight: {', '.join(answer.live_jobs)}")
    return 0


def release_refusal(pool: str, run_id: str, answer: ReleaseAnswer) -> str:
    """Why the pool kept the leases, and what to do."""
    if not answer.live_jobs:
        return f"quota release {pool} {run_id}: {answer.refused}"
    return (
        f"quota release {pool} {run_id}: {answer.refused}: {', '.join(answer.live_jobs)} (cancel them, "
        "or wait for the orphan sweep; `--force` releases the GPUs anyway)"
    )

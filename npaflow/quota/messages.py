"""The names a quota pool's workflow answers to, shared by the pool, the runs and the CLI."""

from __future__ import annotations

#: One workflow per pool, on the workers' task queue.
POOL_WORKFLOW_TYPE = "NpaflowQuotaPool"
#: `quota set` (update-with-start): the pool's config; answers the pool's status.
CONFIGURE_UPDATE = "configure"
#: `quota delete`: ends the pool when nothing holds or waits; answers why not otherwise.
DELETE_UPDATE = "delete"
#: A run's wave asks (LeaseRequest), again every ASK_AGAIN while it waits; the pool answers by ANSWER_SIGNAL.
ASK_SIGNAL = "ask"
#: A run gives a lease back (its id): the wave ended, or stopped waiting.
RELEASE_SIGNAL = "release"
#: A run gives a lease back with what its attempts spent (SpentRelease): its team is charged that.
RELEASE_SPENT_SIGNAL = "release_spent"
#: The pool's answer to a run (LeaseAnswer): granted, where the wave waits, or refused.
ANSWER_SIGNAL = "quota_answer"
#: `quota release POOL RUN`: the leases of a closed run, once its jobs ended (or with force).
RELEASE_RUN_UPDATE = "release_run"
STATUS_QUERY = "status"
POOL_PREFIX = "npaflow-quota-"


def pool_workflow_id(pool: str) -> str:
    """The pool's workflow id."""
    return f"{POOL_PREFIX}{pool}"

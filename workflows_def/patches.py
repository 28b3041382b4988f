"""Patches: what a run records differently from older runs, so their histories still replay.

Loading its spec is the first thing every run does, and runs started by today's
code load it with a local activity behind LOCAL_LOAD. Such a run was started by
code that has every earlier patch too, so `has` answers yes for those without
recording their markers (each one a marker event and a TemporalChangeVersion
upsert per run); a history recorded before LOCAL_LOAD asks for each earlier
patch as it always did. The SDK memoizes `workflow.patched` per run.
"""

from __future__ import annotations

from temporalio import workflow

#: The final memo carries the run's GPU- and node-hours (for `npaflow list`).
FINAL_USAGE = "memo-final-usage-v1"
#: Runs notify the workers' webhooks of how they ended.
NOTIFICATIONS = "run-notifications-v1"
#: The spec is loaded by a local activity (no activity task, no workflow task of its own).
LOCAL_LOAD = "load-spec-local-v1"
#: Waves with cached steps ask the stage cache first (asked only by runs that cache a step).
STAGE_CACHE = "stage-cache-v1"
#: A suspended run gives its wave's GPUs back while it waits for resume, and asks again after.
QUOTA_SET_ASIDE = "quota-set-aside-while-suspended-v1"
#: A quota pool sends each wave only its newest answer of a settle (NpaflowQuotaPool, not runs).
ONE_ANSWER_PER_WAVE = "quota-one-answer-per-wave-v1"
#: A pool gives a closed run's held GPUs back only once its jobs are verified ended (NpaflowQuotaPool).
VERIFIED_RECLAIM = "quota-reclaim-after-jobs-ended-v1"
#: A run gives a lease back with what the wave's attempts spent (the pool charges that).
QUOTA_SPENT_RELEASE = "quota-release-with-spend-v1"
#: A failed fan-out batch's members count as succeeded only with their declared outputs present.
MEMBER_OUTPUTS = "fan-out-member-outputs-v1"
#: A retry of a fan-out batch launches only the members no attempt ran to success.
MEMBER_RETRIES = "fan-out-member-retries-v1"
#: A cancelled run gives a wave's GPUs back after its cleanup cancelled the wave's jobs, not before.
QUOTA_RELEASE_AFTER_CANCEL = "quota-release-after-cancel-v1"
#: A resume polls (adopts) a job an earlier execution cancelled without seeing it end: none launch beside it.
ADOPT_UNVERIFIED_CANCEL = "adopt-unverified-cancel-v1"
#: A wave whose cancel at the run's end was not seen to take keeps its GPUs until the pool sees the job end.
QUOTA_HELD_WHILE_UNVERIFIED = "quota-held-while-cancel-unverified-v1"


def loads_locally() -> bool:
    """Whether this run loads its spec with a local activity (recorded at its first ask)."""
    return workflow.patched(LOCAL_LOAD)


def has(patch: str) -> bool:
    """Whether this run's history was recorded by code with `patch` (earlier than LOCAL_LOAD)."""
    return loads_locally() or workflow.patched(patch)
